/**
 * The typed error hierarchy of gymflow. Every error carries a stable `code` that scripts and
 * Temporal failure types can match on; messages name the input and what is wrong with it.
 */

/** Base class of every error gymflow throws on purpose. */
export class GymflowError extends Error {
  /** A stable, machine-readable code (`SCHEMA_ERROR`, `RESET_NEEDED`, …). */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * An action that an environment cannot execute. Environments do not throw it from `step()` (an invalid
 * action is an observation, see {@link AgentEnv}); parsers and validators use it to say why.
 */
export class InvalidActionError extends GymflowError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_ACTION', message, options);
  }
}

/** `step()` was called before the first `reset()`. */
export class ResetNeededError extends GymflowError {
  constructor(message = 'step() called before reset(): call reset() to start an episode') {
    super('RESET_NEEDED', message);
  }
}

/** `step()` was called after the episode terminated or was truncated. */
export class EpisodeEndedError extends GymflowError {
  constructor(message = 'step() called after the episode ended: call reset() to start a new episode') {
    super('EPISODE_ENDED', message);
  }
}

/**
 * `step()` was called while another `step()` of the same episode was still running. Steps are sequential: two
 * at once could both end the episode, or act on a state the other is changing.
 */
export class StepInProgressError extends GymflowError {
  constructor(message = 'step() called while another step() of this episode is still running: await each step before the next') {
    super('STEP_IN_PROGRESS', message);
  }
}

/** The environment was used after `close()`. */
export class EnvClosedError extends GymflowError {
  constructor(message = 'environment used after close()') {
    super('ENV_CLOSED', message);
  }
}

/** An environment id, registration or spec problem. */
export class RegistryError extends GymflowError {
  constructor(message: string) {
    super('REGISTRY_ERROR', message);
  }
}

/** A record (trajectory, profile, config) that fails its schema; the message names file, line and JSON path. */
export class SchemaError extends GymflowError {
  /** Every problem found, each already formatted as `place path: message`. */
  readonly issues: readonly string[];

  constructor(message: string, issues: readonly string[] = [message]) {
    super('SCHEMA_ERROR', message);
    this.issues = issues;
  }
}

/** A configuration or argument that no retry can fix. */
export class ConfigError extends GymflowError {
  constructor(message: string) {
    super('CONFIG_ERROR', message);
  }
}

/**
 * An output (a file, a directory, a store name) that already holds something a command would replace:
 * collected trajectories, an eval result, a calibration. The message names it and says to pass `--force`.
 * A {@link ConfigError} (code `CONFIG_ERROR`), so no retry repeats it.
 */
export class OutputExistsError extends ConfigError {}

/** A task id or task definition that does not exist or is malformed. */
export class TaskError extends GymflowError {
  constructor(message: string) {
    super('TASK_ERROR', message);
  }
}
