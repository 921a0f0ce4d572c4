import { z } from 'zod';
import { sha256Ref, sortKeys } from './canonical.js';
import { SchemaError } from './errors.js';
import { fastCheckTrajectory, fastParseTrajectory, STARTED_AT } from './trajectory-fast.js';

/**
 * The trajectory: one JSON object per episode, the record every part of gymflow shares
 * (DESIGN.md §4). Files of trajectories are JSONL.
 */

/** The schema version this code writes. Readers accept exactly this version. */
export const TRAJECTORY_SCHEMA_VERSION = '1.0';

/** Which reward layer produced a score. */
export const REWARD_LAYERS = ['env', 'rules', 'judge', 'human', 'learned'] as const;

const finite = z.number().refine(Number.isFinite, { message: 'expected a finite number' });

const rubricScore = z
  .object({
    score: finite.describe('Score in [0, 1] for this rubric.'),
    layer: z.enum(REWARD_LAYERS),
    weight: finite.optional(),
    rationale: z.string().optional(),
  })
  .strict();

/** The process-reward block of one step. */
export const StepRewardSchema = z
  .object({
    score: finite.describe('Combined process score of the step.'),
    rubrics: z.record(z.string(), rubricScore),
  })
  .strict();

/** A structured tool call: `{ tool, params }`. */
export const ActionSchema = z
  .object({
    tool: z.string().min(1),
    params: z.record(z.string(), z.unknown()),
  })
  .strict();

/** One step of an episode: what the agent did, what it observed, when, and how it was scored. */
export const StepSchema = z
  .object({
    index: z.number().int().nonnegative(),
    thought: z.string().optional(),
    action: ActionSchema,
    observation: z.string(),
    /** The environment's own reward for this step (the `TimeStep.reward`). */
    envReward: finite.optional(),
    /** Token ids the policy saw and sampled. */
    tokens: z
      .object({ prompt: z.array(z.number().int()).optional(), completion: z.array(z.number().int()).optional() })
      .strict()
      .optional(),
    /** Log-probs of the completion tokens under the sampling policy. */
    logprobs: z.array(finite).optional(),
    startedAt: STARTED_AT,
    durationMs: z.number().nonnegative(),
    /**
     * The policy version that chose this step's action: the training-loop iteration whose checkpoint acted (0: the
     * initial policy), set when a loop collects with its own policy. Asynchronous RL trains on steps of an older version
     * than the one it updates (docs/pipeline.md, "Asynchronous RL"). Like timing, not part of the id.
     */
    policyVersion: z.number().int().nonnegative().optional(),
    /** Set when the action was invalid (unknown tool, params failing the schema, tool failure). */
    error: z.object({ code: z.string(), message: z.string() }).strict().optional(),
    reward: StepRewardSchema.optional(),
    /** Adapter- or env-specific details that have no field of their own. */
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/** The public description of the episode's task (never its answer). */
export const TaskSchema = z
  .object({
    id: z.string().min(1),
    domain: z.string().min(1),
    instruction: z.string(),
    split: z.enum(['train', 'heldout']).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/** Who acted: agent name, model, and the policy checkpoint's artifact ref. */
export const AgentSchema = z
  .object({
    name: z.string().min(1),
    model: z.string().optional(),
    /** Artifact ref of the policy checkpoint that acted. */
    checkpoint: z.string().optional(),
  })
  .strict();

/** How the episode ended; `terminated` and `truncated` are never both true. */
export const OutcomeSchema = z
  .object({
    success: z.boolean(),
    score: finite.describe('Outcome score in [0, 1].'),
    terminated: z.boolean(),
    truncated: z.boolean(),
    reason: z.string(),
    /**
     * The confidence the agent stated in its answer, in [0, 1], when the environment reads one (a question-answering
     * env's `info.confidence` on the terminating step); absent otherwise, so earlier trajectories keep their ids.
     * Evaluation reports the calibration error from it.
     */
    confidence: z.number().min(0).max(1).optional(),
  })
  .strict()
  .refine((o) => !(o.terminated && o.truncated), {
    message: 'terminated and truncated are both true; exactly one (or neither) may hold',
  });

/** The trajectory's reward summary; `layers` split `total` by the layer that produced it. */
export const TrajectoryRewardSchema = z
  .object({
    total: finite,
    outcome: finite,
    process: finite,
    efficiency: finite,
    /** What each layer contributed to `total`. */
    layers: z.record(z.string(), finite),
  })
  .strict();

/** The standard trajectory (DESIGN §4): one JSON object per episode, one line of a JSONL file. */
export const TrajectorySchema = z
  .object({
    schemaVersion: z.literal(TRAJECTORY_SCHEMA_VERSION),
    id: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected sha256:<64 hex digits>'),
    task: TaskSchema,
    envId: z.string().min(1),
    agent: AgentSchema,
    steps: z.array(StepSchema),
    outcome: OutcomeSchema,
    reward: TrajectoryRewardSchema.optional(),
    metadata: z.record(z.string(), z.unknown()),
  })
  .strict();

/** A validated trajectory. */
export type Trajectory = z.infer<typeof TrajectorySchema>;
/** One step of a {@link Trajectory}. */
export type TrajectoryStep = z.infer<typeof StepSchema>;
/** The process-reward block of a step. */
export type StepReward = z.infer<typeof StepRewardSchema>;
/** The reward summary of a trajectory. */
export type TrajectoryReward = z.infer<typeof TrajectoryRewardSchema>;
/** The outcome of a trajectory. */
export type Outcome = z.infer<typeof OutcomeSchema>;

/**
 * The content id of a trajectory: sha256 of its canonical JSON without `id`, timing fields
 * (`startedAt`, `durationMs`), rewards (scoring does not change the behaviour) or metadata. Two
 * episodes that did the same thing on the same task get the same id; the same actions on two
 * different tasks do not.
 */
export function trajectoryId(t: Omit<Trajectory, 'id'> | Trajectory): string {
  // `contentRef` of { schemaVersion, task, envId, agent, outcome, steps: [{ index, thought, action, observation,
  // envReward, tokens, logprobs, error }] }, with the objects whose keys are known built in sorted order at once,
  // instead of sorted copies of them: the same canonical JSON (`trajectory.test.ts` checks it), without sorting
  // eight keys twice for every step.
  const behaviour = {
    agent: sortKeys(t.agent),
    envId: sortKeys(t.envId),
    outcome: sortKeys(t.outcome),
    schemaVersion: sortKeys(t.schemaVersion),
    steps: t.steps.map((s) => ({
      action: sortedAction(s.action),
      envReward: sortKeys(s.envReward),
      error: sortKeys(s.error),
      index: sortKeys(s.index),
      logprobs: sortKeys(s.logprobs),
      observation: sortKeys(s.observation),
      thought: sortKeys(s.thought),
      tokens: sortKeys(s.tokens),
    })),
    task: sortKeys(t.task),
  };
  return sha256Ref(JSON.stringify(behaviour));
}

/** `sortKeys(action)`: built in order when the action has no keys but `tool` and `params`. */
function sortedAction(action: unknown): unknown {
  if (typeof action !== 'object' || action === null || Array.isArray(action)) return sortKeys(action);
  const a = action as Record<string, unknown>;
  for (const key in a) if (key !== 'tool' && key !== 'params') return sortKeys(action);
  return { params: sortKeys(a.params), tool: sortKeys(a.tool) };
}

/**
 * Validates one trajectory value: the schema (via core's `parseTrajectory`) and the content id
 * (`id` must equal `trajectoryId` of the record, since the store addresses trajectories by it).
 * Throws a `SchemaError` naming `place` and the JSON path.
 */
export function checkTrajectory(value: unknown, place: string): Trajectory {
  return checkId(parseTrajectory(value, place), place);
}

/**
 * {@link checkTrajectory} of a value fresh from `JSON.parse` that nothing else holds (a line of a JSONL file): the
 * same result and errors, but a valid value whose keys are already in the schema's order is returned itself instead
 * of a copy (`fastCheckTrajectory`), so readers that keep every trajectory build each once.
 */
export function checkTrajectoryJson(value: unknown, place: string): Trajectory {
  return checkId(fastCheckTrajectory(value) ?? parseTrajectory(value, place), place);
}

/** `t`, when its `id` is its content id; else a `SchemaError` naming `place`. */
function checkId(t: Trajectory, place: string): Trajectory {
  const expected = trajectoryId(t);
  if (t.id !== expected) {
    const issue = `${place} $.id: does not match the trajectory's content (expected ${expected})`;
    throw new SchemaError(issue, [issue]);
  }
  return t;
}

/** Builds a trajectory from its parts, computing its id, and validates it. */
export function makeTrajectory(parts: Omit<Trajectory, 'id' | 'schemaVersion'>): Trajectory {
  const withVersion = { schemaVersion: TRAJECTORY_SCHEMA_VERSION, ...parts } as const;
  const t = { ...withVersion, id: trajectoryId(withVersion) };
  return parseTrajectory(t, '<trajectory>');
}

/** JSON Schema (draft 2020-12) of a trajectory, as `gymflow record schema` prints it. */
export function trajectoryJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://gymflow.dev/schema/trajectory-1.0.json',
    title: 'gymflow trajectory',
    ...z.toJSONSchema(TrajectorySchema, { target: 'draft-2020-12', unrepresentable: 'any' }),
  };
}

/** `$.steps[3].action.tool` from a zod issue path. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '$';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** Formats zod issues as `place $.path: message` lines. */
export function formatZodIssues(error: z.ZodError, place: string): string[] {
  return error.issues.map((issue) => `${place} ${jsonPath(issue.path)}: ${issue.message}`);
}

/**
 * Validates one trajectory value. `place` names where it came from (`file.jsonl:17`) and prefixes every
 * problem. Throws a {@link SchemaError} listing all of them.
 */
export function parseTrajectory(value: unknown, place: string): Trajectory {
  // The hand-written check returns what zod would for the common valid shapes, several times faster; anything
  // else (every invalid value among them) goes to zod, which decides and words the errors.
  const fast = fastParseTrajectory(value);
  if (fast !== undefined) return fast;
  const result = TrajectorySchema.safeParse(value);
  if (!result.success) {
    const issues = formatZodIssues(result.error, place);
    throw new SchemaError(issues.join('\n'), issues);
  }
  return result.data;
}

/** One line of a JSONL file, parsed and validated. */
export type JsonlRecord<T> = { line: number; ok: true; value: T } | { line: number; ok: false; errors: string[] };

/**
 * Parses JSONL text line by line. Blank lines are skipped; a line that is not JSON or fails the schema
 * becomes an error record naming `file:line` and the JSON path, and the rest of the file goes on.
 * `firstLine` is the line number of the first of `lines` (a part of a file read elsewhere).
 */
export function* parseJsonlLines<T>(
  lines: Iterable<string>,
  file: string,
  parse: (value: unknown, place: string) => T,
  firstLine = 1,
): Generator<JsonlRecord<T>> {
  let line = firstLine - 1;
  for (const text of lines) {
    line += 1;
    if (text.trim() === '') continue;
    const place = `${file}:${line}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      yield { line, ok: false, errors: [`${place} $: invalid JSON (${(err as Error).message})`] };
      continue;
    }
    try {
      yield { line, ok: true, value: parse(value, place) };
    } catch (err) {
      yield { line, ok: false, errors: err instanceof SchemaError ? [...err.issues] : [`${place} $: ${String(err)}`] };
    }
  }
}
