/**
 * The MDP protocol every gymflow environment speaks (DESIGN.md §3): structured tool calls in,
 * observations and rewards out, Gymnasium's terminated/truncated distinction kept exact.
 */

/** A JSON Schema document (draft 2020-12 subset as accepted by ajv). */
export type JsonSchema = Record<string, unknown>;

/** What a tool is for; reward rules and profiles reason about categories, not tool names. */
export const TOOL_CATEGORIES = ['read', 'write', 'execute', 'search', 'communicate', 'think', 'submit'] as const;
/** One of {@link TOOL_CATEGORIES}. */
export type ToolCategory = (typeof TOOL_CATEGORIES)[number];

/** A tool the agent may call: the action space is the set of these with their parameter schemas. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the `params` object. */
  parameters: JsonSchema;
  category: ToolCategory;
}

/** One action: a structured tool call. */
export interface Action {
  tool: string;
  params: Record<string, unknown>;
}

/**
 * What the agent produced around an action besides the call itself. Environments ignore it; the
 * `Recorder` wrapper keeps it in the trajectory (thought text, token ids and log-probs for RL).
 */
export interface StepMeta {
  thought?: string;
  /** Token ids of the prompt the policy saw and of the completion it sampled. */
  tokens?: { prompt?: number[]; completion?: number[] };
  /** Log-probabilities of the completion tokens under the policy that sampled them. */
  logprobs?: number[];
}

/** Why an episode ended, when it did. */
export type EndReason =
  | 'submitted'
  | 'finished'
  | 'max_steps'
  | 'timeout'
  | 'error'
  | (string & Record<never, never>);

/** An invalid action reported as data (`info.error`), never thrown. */
export interface ActionErrorInfo {
  code: 'unknown_tool' | 'invalid_params' | 'tool_failed' | (string & Record<never, never>);
  message: string;
}

/** The result of `reset()` and `step()`. `done = terminated || truncated`. */
export interface TimeStep {
  observation: string;
  reward: number;
  /** The task ended (submit/finish/respond, success or not). */
  terminated: boolean;
  /** A limit ended the episode (steps, time). */
  truncated: boolean;
  /**
   * Free-form details. Conventional keys: `reason` ({@link EndReason}, set whenever the episode ends),
   * `error` ({@link ActionErrorInfo}, set for an invalid action), `task` ({@link TaskInfo}, set by
   * `reset`), `success` (boolean, set when terminated), `score` (number in [0, 1], set when terminated).
   */
  info: Record<string, unknown>;
}

/** Which slice of an environment's tasks: training tasks or held-out ones used only for evaluation. */
export type Split = 'train' | 'heldout';

/** The public description of a task (what an agent and a trajectory may see; no answers). */
export interface TaskInfo {
  id: string;
  domain: string;
  instruction: string;
  split?: Split;
  metadata?: Record<string, unknown>;
}

/** Options for {@link AgentEnv.reset}. */
export interface ResetOptions {
  /** A task id; without one the environment samples a training task with its RNG. */
  task?: string;
  /** Reseeds the environment's RNG. Without it the RNG continues from where it was (Gymnasium's rule). */
  seed?: number;
}

/**
 * An environment. All methods are async because real environments (Docker sandboxes, simulated users)
 * do I/O.
 *
 * Contract:
 * - `reset` returns the first observation; its `info.task` is the episode's {@link TaskInfo}.
 * - An unknown tool or params that fail the tool's schema are **not** exceptions: `step` returns an
 *   observation explaining the error with `info.error` set.
 * - `step` before `reset` throws `ResetNeededError`; after the episode ended, `EpisodeEndedError`.
 * - `close` is idempotent.
 */
export interface AgentEnv {
  readonly domain: string;
  readonly tools: readonly ToolSpec[];
  reset(options?: ResetOptions): Promise<TimeStep>;
  step(action: Action, meta?: StepMeta): Promise<TimeStep>;
  close(): Promise<void>;
  /** The tasks this environment can run, by split (optional: generated-only envs may omit it). */
  listTasks?(split?: Split): TaskInfo[];
  /**
   * How many tasks `listTasks(split)` returns, for an environment that can say so without generating them
   * (`gymflow envs` lists counts only). Optional: callers fall back to `listTasks(split).length`.
   */
  countTasks?(split?: Split): number;
  /**
   * What a user should know about this instance's tasks that the task lists do not say, one sentence each (a
   * question set's items left out, and why); `gymflow eval` prints them and the eval result records them. Optional.
   */
  notes?(): string[];
}

/** True when a time step ends its episode. */
export function isDone(ts: Pick<TimeStep, 'terminated' | 'truncated'>): boolean {
  return ts.terminated || ts.truncated;
}
