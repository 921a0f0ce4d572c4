import { z } from 'zod';

/**
 * The record schemas of every export format (docs/datasets.md is generated from these). Field names
 * follow TRL's dataset conventions where one exists (`messages`, `prompt`, `completion`, `chosen`,
 * `rejected`, `tools`) and OpenAI's chat format for tool calls (`tool_calls[].function.arguments` is a
 * JSON string, `tool` messages carry `tool_call_id` and `name`).
 *
 * Values whose shape varies between rows (tool arguments, tool JSON Schemas, task metadata) are JSON
 * **strings**: Arrow (and so `datasets`) would otherwise merge every row's keys into one struct and
 * hand each row the other rows' keys as nulls.
 */

/** The export formats. `hf` writes one of the record formats as a Hugging Face dataset directory. */
export const EXPORT_FORMATS = ['sft', 'dpo', 'rl', 'benchmark', 'hf'] as const;
/** One of {@link EXPORT_FORMATS}. */
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** The record formats (what `hf` can hold). */
export const RECORD_FORMATS = ['sft', 'dpo', 'rl', 'benchmark'] as const;
/** One of {@link RECORD_FORMATS}. */
export type RecordFormat = (typeof RECORD_FORMATS)[number];

const finite = z.number().refine(Number.isFinite, { message: 'expected a finite number' });

/** A structured tool call on an assistant message (OpenAI / TRL shape). */
export const ToolCallSchema = z
  .object({
    /** `call_<step index>`; the answering tool message has the same `tool_call_id`. */
    id: z.string(),
    type: z.literal('function'),
    function: z
      .object({
        name: z.string(),
        /** Canonical JSON (sorted keys) of the action's params. */
        arguments: z.string(),
      })
      .strict(),
  })
  .strict();

/** A chat message as the DPO format carries it: role, content and the tool-call fields. */
export const ChatMessageSchema = z
  .object({
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    /**
     * system: the tool list and call format; user: the task instruction; assistant: the thought, then
     * the call as `<tool_call>\n{"name":…,"arguments":…}\n</tool_call>`; tool: the observation.
     */
    content: z.string(),
    /** Assistant messages: the same call, structured. */
    tool_calls: z.array(ToolCallSchema).optional(),
    /** Tool messages: the tool's name. */
    name: z.string().optional(),
    /** Tool messages: the `id` of the call answered. */
    tool_call_id: z.string().optional(),
  })
  .strict();

/**
 * A chat message with the per-step training information (SFT `messages`, RL `prompt`/`completion`).
 * Every message has every field (null where it does not apply), so Arrow sees one row type.
 */
export const TrainMessageSchema = z
  .object({
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    content: z.string(),
    /** Assistant messages: the structured call (null on other roles). */
    tool_calls: z.array(ToolCallSchema).nullable(),
    /** Assistant messages: the thought alone, `content` without the `<tool_call>` block (null elsewhere). */
    thought: z.string().nullable(),
    /** Tool messages: the tool's name (null elsewhere). */
    name: z.string().nullable(),
    /** Tool messages: the `id` of the call answered (null elsewhere). */
    tool_call_id: z.string().nullable(),
    /**
     * Loss mask: true on assistant messages whose action was valid; false on system, user and tool
     * messages (the policy does not produce them) and on assistant messages whose action was invalid
     * (unknown tool, bad params), which stay in the context so the recovery is learned but not the error.
     */
    train: z.boolean(),
    /** The trajectory step this message belongs to (assistant: the action; tool: its observation); null for system/user. */
    step_index: z.number().int().nonnegative().nullable(),
    /** Assistant messages: the step's process reward `steps[i].reward.score` when scored, else null. */
    step_reward: finite.nullable(),
    /** Assistant messages: the environment's reward for the step (`steps[i].envReward`), else null. */
    env_reward: finite.nullable(),
  })
  .strict();

/** `--format sft`: one conversation per trajectory (TRL conversational language-modeling type). */
export const SftRecordSchema = z
  .object({
    messages: z.array(TrainMessageSchema).min(2),
    /** JSON string: `[{"type":"function","function":{name, description, parameters}}]`. */
    tools: z.string(),
    trajectory_id: z.string(),
    task_id: z.string(),
    env_id: z.string(),
    domain: z.string(),
    agent: z.string(),
    success: z.boolean(),
    /** `reward.total` when the trajectory is scored, else `outcome.score`. */
    reward: finite,
    num_steps: z.number().int().nonnegative(),
    /** `outcome.reason` (`submitted`, `max_steps`, `error`, …). */
    outcome_reason: z.string(),
  })
  .strict();

/** `--format dpo`: a preference pair (TRL conversational preference type, explicit prompt). */
export const DpoRecordSchema = z
  .object({
    /** The shared prefix: system + user, plus any leading steps both trajectories share. */
    prompt: z.array(ChatMessageSchema).min(2),
    /** The preferred continuation; starts with an assistant message. */
    chosen: z.array(ChatMessageSchema).min(1),
    /** The dispreferred continuation; starts with an assistant message. */
    rejected: z.array(ChatMessageSchema).min(1),
    tools: z.string(),
    task_id: z.string(),
    env_id: z.string(),
    chosen_id: z.string(),
    rejected_id: z.string(),
    chosen_reward: finite,
    rejected_reward: finite,
    /** chosen_reward − rejected_reward. */
    margin: finite,
  })
  .strict();

/** One member of an RL group. */
export const RlMemberSchema = z
  .object({
    trajectory_id: z.string(),
    /** The assistant/tool turns after the shared prompt (with loss mask and step rewards). */
    completion: z.array(TrainMessageSchema),
    reward: finite,
    /** (reward − group mean) / group std (population std); 0 when the group's rewards are all equal. */
    advantage: finite,
    success: z.boolean(),
    num_steps: z.number().int().nonnegative(),
    /**
     * Per step: the process reward (`steps[i].reward.score`), null for an unscored step; the whole
     * field is null when no step is scored (Arrow cannot read a list of nothing but nulls).
     */
    step_rewards: z.array(finite.nullable()).nullable(),
    /** Per step: the environment's reward. */
    env_rewards: z.array(finite),
    /** Per step token ids the policy saw/sampled; null when no step recorded tokens. */
    tokens: z.array(z.object({ prompt: z.array(z.number().int()).nullable(), completion: z.array(z.number().int()).nullable() }).strict()).nullable(),
    /** Per step log-probs of the completion tokens; null when no step recorded them. */
    logprobs: z.array(z.array(finite).nullable()).nullable(),
    /** The episode seed when collect recorded it (`metadata.collect.seed`). */
    seed: z.number().int().nullable(),
    /**
     * Per step the policy version that chose it (`steps[i].policyVersion`, null where none is recorded); absent when no
     * step records one (asynchronous RL: docs/pipeline.md).
     */
    policy_versions: z.array(z.number().int().nonnegative().nullable()).optional(),
  })
  .strict();

/** `--format rl`: the trajectories of one task as a group (GRPO-style). */
export const RlRecordSchema = z
  .object({
    task_id: z.string(),
    env_id: z.string(),
    domain: z.string(),
    /** system + user, shared by the group (TRL's `prompt`). */
    prompt: z.array(TrainMessageSchema).min(2),
    tools: z.string(),
    group: z.array(RlMemberSchema).min(1),
    group_size: z.number().int().positive(),
    reward_mean: finite,
    reward_std: finite,
  })
  .strict();

/** `--format benchmark`: a task with a reference solution. */
export const BenchmarkRecordSchema = z
  .object({
    task_id: z.string(),
    env_id: z.string(),
    domain: z.string(),
    instruction: z.string(),
    /** The task's own split label (`train`/`heldout`), when it has one. */
    task_split: z.string().nullable(),
    /** JSON string of the task's metadata (`{}` when none). */
    metadata: z.string(),
    reference: z
      .object({
        trajectory_id: z.string(),
        agent: z.string(),
        /** The best successful trajectory's actions, in order; `arguments` is canonical JSON. */
        actions: z.array(z.object({ tool: z.string(), arguments: z.string() }).strict()),
        num_steps: z.number().int().nonnegative(),
        reward: finite,
      })
      .strict(),
    /** Trajectories of this task in the input (after filters). */
    attempts: z.number().int().positive(),
    successes: z.number().int().nonnegative(),
    success_rate: finite,
  })
  .strict();

/** A structured tool call (see {@link ToolCallSchema}). */
export type ToolCall = z.infer<typeof ToolCallSchema>;
/** A plain chat message (see {@link ChatMessageSchema}). */
export type ChatMessage = z.infer<typeof ChatMessageSchema>;
/** A chat message with loss mask and step fields (see {@link TrainMessageSchema}). */
export type TrainMessage = z.infer<typeof TrainMessageSchema>;
/** One SFT record (see {@link SftRecordSchema}). */
export type SftRecord = z.infer<typeof SftRecordSchema>;
/** One DPO record (see {@link DpoRecordSchema}). */
export type DpoRecord = z.infer<typeof DpoRecordSchema>;
/** One member of an RL group (see {@link RlMemberSchema}). */
export type RlMember = z.infer<typeof RlMemberSchema>;
/** One RL record (see {@link RlRecordSchema}). */
export type RlRecord = z.infer<typeof RlRecordSchema>;
/** One benchmark record (see {@link BenchmarkRecordSchema}). */
export type BenchmarkRecord = z.infer<typeof BenchmarkRecordSchema>;

/** The record schema of each record format. */
export const RECORD_SCHEMAS = {
  sft: SftRecordSchema,
  dpo: DpoRecordSchema,
  rl: RlRecordSchema,
  benchmark: BenchmarkRecordSchema,
} as const;

/** JSON Schema (draft 2020-12) of a record format, as docs/datasets.md shows it. */
export function recordJsonSchema(format: RecordFormat): Record<string, unknown> {
  return {
    $id: `https://gymflow.dev/schema/dataset-${format}-1.json`,
    title: `gymflow ${format} record`,
    ...z.toJSONSchema(RECORD_SCHEMAS[format], { target: 'draft-2020-12' }),
  };
}
