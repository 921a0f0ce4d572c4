import { z } from 'zod';
import { DURATION_PATTERN, durationMs } from '../core/duration.js';
import { defined } from '../core/defined.js';
import { ConfigError } from '../core/errors.js';

/** The task queues of a configuration that names none: the CPU workers' and the GPU worker's (`workers/`). */
export const DEFAULT_TASK_QUEUES = { cpu: 'gymflow', gpu: 'gymflow-gpu' } as const;

/**
 * The pipeline configuration (docs/pipeline.md, "Pipeline configuration"): what `trainingLoop` and `pipeline`
 * run. Written as YAML (or JSON) with snake_case keys, validated here at the edge with zod; every problem
 * names the file, the line and the JSON path (`loop.yaml:14 $.phases[1].collect.agent: …`).
 *
 * The value that travels through Temporal is the parsed {@link PipelineConfig} (defaults filled in), so a
 * worker never re-reads the file and every activity sees the same numbers.
 */

const positiveInt = z.number().int().positive();

/** An environment's keyword arguments, as `make(id, { kwargs })` takes them (a JSON object). */
const EnvKwargsSchema = z.record(z.string(), z.unknown());

/** A Temporal duration string (`90s`, `30m`, `6h`), read by `durationMs` (src/core/duration.ts). */
const duration = z.string().regex(DURATION_PATTERN, "expected a duration like '90s', '30m' or '6h'");

/**
 * Heartbeats of the workers are sent at most every 5 s (`maxHeartbeatThrottleInterval` in workers/worker.ts)
 * and the train and shard activities heartbeat at least every quarter of their heartbeat timeout: a timeout
 * shorter than twice the throttle would fail healthy ones.
 */
const MIN_HEARTBEAT_TIMEOUT_MS = 10_000;

/** A heartbeat timeout: a duration of at least {@link MIN_HEARTBEAT_TIMEOUT_MS}. */
const heartbeatTimeout = duration.refine((v) => !DURATION_PATTERN.test(v) || durationMs(v) >= MIN_HEARTBEAT_TIMEOUT_MS, {
  message: `must be at least 10s (workers send heartbeats up to 5s apart)`,
});

/**
 * An agent spec for collection: `expert` (the environment's scripted expert), `policy` (the current policy
 * of the loop, exported to ONNX and run through `local:<dir>`, or served: `policy.serve`), or any spec `resolveAgent` knows
 * (`random`, `openai:MODEL@URL`, `local:DIR`, …).
 */
const agentSpec = z.string().min(1, 'expected an agent spec: expert, policy, random, local:DIR, openai:MODEL…');

/** Where the initial policy comes from: a tiny model built from a trainer config, or a model directory. */
export const PolicyInitSchema = z.union([
  z
    .object({
      tiny: z.record(z.string(), z.unknown()),
      /**
       * An agent the environment registers (`expert`, or another such as recall-v0's `flawed`): the tiny model's
       * BPE tokenizer (`tiny.bpe_vocab_size` > 0) learns its merges from the environment's own texts — one episode
       * of that agent per training task, rendered as SFT records — so the env's names and numbers are few tokens.
       * Name the agent the SFT phase imitates, so what it writes is in the vocabulary. Without it the BPE learns
       * from a small built-in corpus.
       */
      tokenizer_corpus: z
        .string()
        .regex(/^[A-Za-z0-9][\w.-]*$/, 'expected the name of an agent the environment registers, e.g. expert')
        .optional(),
    })
    .strict(),
  z.object({ path: z.string().min(1) }).strict(),
]);

/**
 * `policy.serve`: act through an OpenAI-compatible server instead of the ONNX export on the CPU workers.
 * For every stage that acts with the policy (collection, evaluation) the GPU worker checks the checkpoint
 * out and starts `command` (activity `servePolicy`), the CPU workers wait until the server lists the
 * checkpoint's model name (`awaitPolicyServer`) and then act through `openai:NAME@http://HOST:PORT/v1`; the
 * server is stopped when the stage ends (docs/pipeline.md, "Serving the policy").
 */
export const PolicyServeSchema = z
  .object({
    /**
     * The server's command line, with placeholders filled in (`serveLaunch`): `{model}` the checkpoint directory
     * on the GPU host, `{host}` the bind address, `{port}`, `{name}` the model name to serve it as. Default:
     * the trainer's own server (`python -m gymflow_trainer serve`); for vLLM e.g.
     * `[vllm, serve, '{model}', --host, '{host}', --port, '{port}', --served-model-name, '{name}', --return-tokens-as-token-ids]`.
     */
    command: z
      .array(z.string().min(1))
      .min(1)
      .refine((argv) => argv.some((a) => a.includes('{model}')), 'the command must name the checkpoint directory with {model}')
      .optional(),
    /** Host name or address the CPU workers reach the GPU host's server at. */
    host: z.string().min(1).default('127.0.0.1'),
    /** Address the server binds to (default: `host`; `0.0.0.0` when the CPU workers are on other hosts). */
    bind: z.string().min(1).optional(),
    port: z.number().int().min(1).max(65535).default(8000),
    /** How long the server may take to load the model and list it (a 70B model on vLLM: minutes). */
    startup_timeout: duration
      .refine((v) => !DURATION_PATTERN.test(v) || durationMs(v) <= 60 * 60_000, 'at most 1h')
      .default('10m'),
    /** Ask for the sampled token ids (`return_token_ids`: vLLM and the trainer's server), recorded for RL. */
    token_ids: z.boolean().default(true),
  })
  .strict();

/** `collect`: how rollouts are gathered each iteration. */
export const CollectSectionSchema = z
  .object({
    /** Agent spec: `expert`, `policy` (the loop's current policy) or any `resolveAgent` spec. */
    agent: agentSpec.default('policy'),
    /**
     * Environment the rollouts come from; default: the top-level `env` (which evaluation always uses). A
     * variant with the same task ids, e.g. `gymflow/tool-use-randomized-v0` (domain randomisation).
     */
    env: z.string().min(1).optional(),
    /**
     * Keyword arguments of the environment (`make(id, { kwargs })`), e.g. `{ user: 'openai:gpt-4o-mini' }` for a
     * conversation env's simulated user; default: the top-level `env_kwargs`. They are part of the workflow's
     * history: name keys by their environment variables, never put a secret here.
     */
    env_kwargs: EnvKwargsSchema.optional(),
    /** Which task list to draw from. */
    split: z.enum(['train', 'heldout']).default('train'),
    /** Groups (tasks drawn) per iteration; episodes = tasks × group_size. */
    tasks: positiveInt.default(16),
    /** Episodes per task (GRPO group size). */
    group_size: positiveInt.default(1),
    /** Groups per shard: each shard is one activity; shards run in parallel on the CPU workers. */
    shard_size: positiveInt.default(8),
    /**
     * How a shard runs: `activity` (an activity any CPU worker may take, heartbeating its progress) or `local`
     * (a local activity in the worker that runs the workflow: no round trip through the server per shard,
     * but no spreading across workers, no heartbeats or progress, and status queries wait while shards run).
     * `local` suits shards of milliseconds, such as a scripted expert in an in-process environment; anything
     * that takes seconds belongs in `activity` (docs/operations.md §9).
     */
    shard_execution: z.enum(['activity', 'local']).default('activity'),
    /** Episodes in flight inside one shard. */
    concurrency: positiveInt.default(4),
    /** Step limit of every episode (default: the environment's). */
    max_steps: positiveInt.optional(),
    /** Sampling temperature of the `policy` agent (0 = greedy). */
    temperature: z.number().min(0).default(1),
    /** Tokens the `policy` agent may generate per turn. */
    max_new_tokens: positiveInt.optional(),
    /**
     * How long a shard activity may go without a heartbeat before Temporal counts its worker as lost and retries
     * the shard (which runs only the episodes its episode journal lacks): how fast a lost CPU worker is noticed.
     * A shard heartbeats at least every quarter of it however long an episode takes. The evaluation (`eval`) takes
     * the same timeout unless `eval.heartbeat_timeout` is set: it runs episodes the same way. At least 10s; default 5m.
     */
    heartbeat_timeout: heartbeatTimeout.optional(),
  })
  .strict();

/** A judge rubric of `reward.judge.rubrics`: a built-in or profile rubric by name, or a new one with its wording. */
export const JudgeRubricSchema = z
  .object({
    /** `goalProgress`, `toolSelection`, `parameterCorrectness`, a rubric of the profile, or a new name. */
    name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'expected a rubric name of letters, digits and _'),
    /** What the rubric asks; required for a rubric that is neither built in nor the profile's. */
    description: z.string().min(1).optional(),
    /** Score levels and their meanings (`{ '1': 'right tool', '0': 'wrong tool' }`). */
    scale: z.record(z.string(), z.string()).optional(),
    /** Its weight on the profile's weight scale (the rules' rubrics keep theirs). */
    weight: z.number().positive().finite(),
  })
  .strict();

/**
 * `reward.judge`: the LLM-as-judge layer, run as its own activity (`judgeRollouts`) before the scoring. The API key
 * is read on the worker from `api_key_env` (default `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`), never from the
 * configuration, which is part of the workflow's history.
 */
export const JudgeSectionSchema = z
  .object({
    /** `anthropic` (Messages API) or `openai` (OpenAI or any OpenAI-compatible server: vLLM, SGLang, …). */
    provider: z.enum(['anthropic', 'openai']),
    model: z.string().min(1),
    /** API base URL (`http://gpu-host:8000/v1` for vLLM); default the provider's. */
    base_url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL, like http://localhost:8000/v1' }).optional(),
    /** Environment variable of the workers that holds the API key. */
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name').optional(),
    /** The rubrics judged, with their weights; default: the judge rubrics the domain profile weights. */
    rubrics: z
      .array(JudgeRubricSchema)
      .min(1)
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((r, i) => {
          if (seen.has(r.name)) ctx.addIssue({ code: 'custom', message: `rubric '${r.name}' is listed twice`, path: [i, 'name'] });
          seen.add(r.name);
        });
      })
      .optional(),
    /** Judge requests in flight at once. */
    concurrency: z.number().int().min(1).max(256).default(8),
    /** Per-request timeout (a timeout is retried like a 5xx). */
    timeout: duration.default('60s'),
    /** Retries of one request after a 429, 5xx, timeout or connection error (backoff honours `retry-after`). */
    max_retries: z.number().int().min(0).max(20).default(4),
    /** Sampling temperature sent to OpenAI-compatible servers. */
    temperature: z.number().min(0).max(2).default(0),
    /** Output tokens per request. */
    max_tokens: positiveInt.default(1024),
    /**
     * What one reward stage may spend: `calls` (HTTP requests, retries and repairs included) and `tokens` (input +
     * output). Checked before each step's first request; steps in flight finish. Verdicts from the cache are free.
     */
    budget: z.object({ calls: positiveInt.optional(), tokens: positiveInt.optional() }).strict().optional(),
  })
  .strict();

/** `reward.calibration`: a calibration fitted by `gymflow reward calibrate`, applied after the automatic layers. */
export const CalibrationSectionSchema = z
  .object({
    /** The calibration JSON file, as the CPU workers see it. */
    path: z.string().min(1),
  })
  .strict();

/** `reward.learned`: the learned step reward model (an ONNX export of `kind: reward_model`). */
export const LearnedSectionSchema = z
  .object({
    /** The exported reward-model directory, as the CPU workers see it. */
    path: z.string().min(1),
    /** Weight of its rubric `learned` on the profile's weight scale. */
    weight: z.number().positive().finite().default(0.2),
  })
  .strict();

/**
 * `reward`: how trajectories are scored between collection and export — the rule layer (on unless `rules: false`),
 * and when set, the LLM judge, the human calibration and the learned reward model. A section with none of the
 * last three schedules exactly the activities it always did.
 */
export const RewardSectionSchema = z
  .object({
    /** Score with the reward rules of a domain profile (the older name of `rules`; give one of the two). */
    enabled: z.boolean().default(true),
    /** The rule layer (default on). */
    rules: z.boolean().optional(),
    /** Profile name (`gymflow profiles`); default: the environment's domain. */
    profile: z.string().min(1).optional(),
    /** Trajectories scored at once. */
    concurrency: positiveInt.default(8),
    judge: JudgeSectionSchema.optional(),
    calibration: CalibrationSectionSchema.optional(),
    learned: LearnedSectionSchema.optional(),
  })
  .strict();

/** The validated `reward` section. */
export type RewardSection = z.infer<typeof RewardSectionSchema>;

/** Whether the rule layer runs: `rules` when given, else `enabled`. */
export function rulesEnabled(reward: Pick<RewardSection, 'enabled' | 'rules'>): boolean {
  return reward.rules ?? reward.enabled;
}

/** The layers a reward section scores with, in the order they apply. */
export function rewardLayers(reward: RewardSection): ('rules' | 'judge' | 'learned' | 'calibration')[] {
  const layers: ('rules' | 'judge' | 'learned' | 'calibration')[] = [];
  if (rulesEnabled(reward)) layers.push('rules');
  if (reward.judge !== undefined) layers.push('judge');
  if (reward.learned !== undefined) layers.push('learned');
  if (reward.calibration !== undefined) layers.push('calibration');
  return layers;
}

/** `export`: how scored trajectories become the training dataset. */
export const ExportSectionSchema = z
  .object({
    /** Record format; must match `train.command` (sft → sft, rl → rl, dpo → dpo). Default: the command. */
    format: z.enum(['sft', 'rl', 'dpo']).optional(),
    /** Keep successful trajectories only (dpo: the chosen side). */
    success_only: z.boolean().default(false),
    /** Keep trajectories whose reward is at least this. */
    min_reward: z.number().optional(),
    /** Keep trajectories with at most this many steps. */
    max_steps: positiveInt.optional(),
    /** Keep the best K (see docs/datasets.md). */
    top: positiveInt.optional(),
    /** Drop repeated trajectories (same content id). */
    dedup: z.boolean().default(false),
    /** dpo: smallest reward difference that makes a pair. */
    min_margin: z.number().min(0).default(0.1),
    /** dpo: at most this many pairs per task. */
    max_pairs_per_task: positiveInt.optional(),
  })
  .strict();

/** `train`: the trainer command and its configuration overrides. */
export const TrainSectionSchema = z
  .object({
    command: z.enum(['sft', 'rl', 'dpo']),
    /**
     * Overrides of the trainer's configuration (trainer/gymflow_trainer/config.py), checked by the trainer
     * itself before the loop starts. `data`, `output_dir`, `resume_from` and `model.path`/`model.tiny` are
     * set by the pipeline.
     */
    config: z.record(z.string(), z.unknown()).default({}),
    /** Trainer processes (one per GPU). Default: the visible GPUs (CUDA_VISIBLE_DEVICES / nvidia-smi), 1 on CPU. */
    processes: positiveInt.optional(),
    /** Multi-process launcher: `accelerate launch`, `torchrun`, or `auto` (accelerate when installed). */
    launcher: z.enum(['auto', 'accelerate', 'torchrun']).default('auto'),
    /** Start-to-close limit of one training attempt. */
    timeout: duration.default('24h'),
    /**
     * How long the train activity may go without a heartbeat before Temporal counts its worker as lost and
     * retries (resuming from the newest checkpoint): how fast a lost GPU worker is noticed. At least 10s.
     */
    heartbeat_timeout: heartbeatTimeout.default('2m'),
  })
  .strict();

/** The section's output with every field optional: what a phase or the top level may set. */
type SectionOverrides<S extends z.ZodObject> = z.ZodOptional<z.ZodType<Partial<z.output<S>>, Partial<z.input<S>>>>;

/**
 * The section's fields, all optional and *without* their defaults. (zod 4's `.partial()` keeps each field's
 * `.default(…)`, so a phase that left a field out would still carry the default and hide the top-level
 * value.) Defaults are applied once, when the merged section is parsed with the full schema.
 */
function overridesOf<S extends z.ZodObject>(schema: S): SectionOverrides<S> {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    shape[key] = (field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field).optional();
  }
  return z.object(shape).strict().optional() as unknown as SectionOverrides<S>;
}

/** Fields of a phase that may also be given at the top level as defaults. */
const PartialStages = {
  collect: overridesOf(CollectSectionSchema),
  export: overridesOf(ExportSectionSchema),
  train: overridesOf(TrainSectionSchema),
};

/** One section of a phase: the phase's fields over the top level's, field by field (unset fields fall through). */
function mergeSection(top: Record<string, unknown> | undefined, phase: Record<string, unknown> | undefined): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const layer of [top, phase]) {
    for (const [key, value] of Object.entries(layer ?? {})) if (value !== undefined) merged[key] = value;
  }
  return merged;
}

/** One phase: `iterations` passes with the same collection, export and training settings. */
const RawPhaseSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'expected a name of letters, digits, ., _, -'),
    /** Passes in this phase; the last phase may leave it out (it then runs until `max_iterations`). */
    iterations: positiveInt.optional(),
    ...PartialStages,
  })
  .strict();

/**
 * `rl.async`: asynchronous RL (docs/pipeline.md, "Asynchronous RL"). The collection of an `rl` iteration runs while
 * the iteration before it trains, acting with the newest checkpoint there is (one version behind the one the training
 * then updates); the trainer's importance correction (`rollout_correction`) covers the gap.
 */
export const AsyncRlSchema = z
  .object({
    /**
     * How many policy versions older than the one a training updates the steps it trains on may be. The overlapped
     * collection is 1 behind; older steps come only from a batch carried further (a fork's reused rollouts).
     */
    max_staleness: z.number().int().min(1, 'at least 1 (0 is the synchronous loop: leave rl.async out)').default(1),
    /** What happens to trajectories past `max_staleness`: `drop` leaves them out of the export, `fail` refuses the batch. */
    on_stale: z.enum(['drop', 'fail']).default('drop'),
  })
  .strict();

/** `rl`: how the loop runs its `rl` iterations (the trainer's own settings are in `train.config`). */
export const RlSectionSchema = z
  .object({
    async: AsyncRlSchema.optional(),
  })
  .strict();

/** A benchmark's name: part of TensorBoard tags (`eval/<name>/success`) and store names. */
const BENCHMARK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * One entry of `eval.benchmarks`: an environment evaluated after the main evaluation of every iteration (the baseline
 * included), by the same activity, with the same policy, temperature, token limit, concurrency and seed. Its numbers
 * go to the iteration's metrics (`benchmarks.<name>`), `pipeline status` and the curves `eval/<name>/…`.
 */
export const BenchmarkSchema = z
  .object({
    /** Names it in the metrics and curves; unique among the benchmarks. */
    name: z.string().regex(BENCHMARK_NAME, 'expected a name of letters, digits, ., _, - (it becomes part of TensorBoard tags)'),
    /** Registered environment id, e.g. `gymflow/qa-v0`. */
    env: z.string().min(1),
    /**
     * Its keyword arguments (`{ questions: /data/hle.jsonl, judge: 'openai:o3-mini' }`); the top-level `env_kwargs`
     * are the main environment's and do not apply. Part of the workflow's history: never a secret here.
     */
    env_kwargs: EnvKwargsSchema.optional(),
    split: z.enum(['train', 'heldout']).default('heldout'),
    /** Distinct tasks (the split's first N); default: all of the split. */
    tasks: positiveInt.optional(),
    /** Trials of each task (pass^1 … pass^repeats above 1). */
    repeats: positiveInt.default(1),
    /** Evaluate this agent spec instead (default: the eval section's agent, else the loop's policy). */
    agent: agentSpec.optional(),
    /** Step limit of every episode (default: the eval section's, else the environment's). */
    max_steps: positiveInt.optional(),
    /** Answers per bin of the calibration error (default: the eval section's, else 100). */
    calibration_bins: positiveInt.optional(),
  })
  .strict();

/** `eval`: how the policy is measured after every iteration. */
export const EvalSectionSchema = z
  .object({
    split: z.enum(['train', 'heldout']).default('heldout'),
    /** Distinct tasks (the split's first N in order); default: all of the split. */
    tasks: positiveInt.optional(),
    /**
     * Trials: how many times each of the tasks runs, each episode with its own seed; above 1 the eval artifact
     * carries pass^1 … pass^repeats (`evaluate`'s `trials`).
     */
    repeats: positiveInt.default(1),
    /** Sampling temperature of the policy during evaluation (0 = greedy). */
    temperature: z.number().min(0).default(0),
    /** Tokens the policy may generate per turn. */
    max_new_tokens: positiveInt.optional(),
    /** Evaluate the initial policy first, recorded as iteration 0. */
    baseline: z.boolean().default(true),
    /** Evaluate this agent spec instead of the loop's policy (e.g. `expert` as a reference). */
    agent: agentSpec.optional(),
    concurrency: positiveInt.default(4),
    max_steps: positiveInt.optional(),
    /** Seed of the episode seeds (the same every iteration, so iterations are paired). */
    seed: z.number().int().default(0),
    /**
     * Keyword arguments of the environment (`make(id, { kwargs })`), e.g. `{ user: 'openai:gpt-4o-mini' }` for a
     * conversation env's simulated user; default: the top-level `env_kwargs`. They are part of the workflow's
     * history: name keys by their environment variables, never put a secret here.
     */
    env_kwargs: EnvKwargsSchema.optional(),
    /**
     * Answers per bin of the RMS calibration error, for an environment whose episodes state a confidence
     * (`gymflow/qa-v0`); default 100, HLE's.
     */
    calibration_bins: positiveInt.optional(),
    /**
     * How long an evaluation activity may go without a heartbeat before its worker counts as lost and it is retried
     * (running only the episodes its episode journal lacks), as `collect.heartbeat_timeout`. At least 10s; default: the
     * phase's `collect.heartbeat_timeout`, else 5m.
     */
    heartbeat_timeout: heartbeatTimeout.optional(),
    /** More environments evaluated after this one every iteration (see {@link BenchmarkSchema}). */
    benchmarks: z
      .array(BenchmarkSchema)
      .min(1)
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((b, i) => {
          if (seen.has(b.name)) ctx.addIssue({ code: 'custom', message: `benchmark name '${b.name}' is used twice`, path: [i, 'name'] });
          seen.add(b.name);
        });
      })
      .optional(),
  })
  .strict();

/** `target`: stop as soon as the metric reaches the value. */
export const TargetSchema = z
  .object({
    metric: z.enum(['heldout_success', 'heldout_reward']).default('heldout_success'),
    value: z.number(),
  })
  .strict();

/**
 * `retention`: what the loop keeps of its older iterations' models. After each training iteration the
 * checkpoints and ONNX policies of the other iterations are pruned (`gymflow store prune`: entry, names and
 * lineage stay; `gymflow store gc` then deletes the files).
 */
export const RetentionSchema = z
  .object({
    /** Keep the models of this many most recent iterations (the current policy is the newest). */
    keep_last: positiveInt,
    /** Also keep the model of the iteration with the best held-out success. */
    keep_best: z.boolean().default(true),
  })
  .strict();

const RawConfigSchema = z
  .object({
    /** Experiment name: the workflow id prefix, the `GymflowExperiment` search attribute, store ref names. */
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'expected a name of letters, digits, ., _, - (it becomes part of workflow ids and ref names)'),
    /** Registered environment id (`gymflow envs`). */
    env: z.string().min(1),
    /** Keyword arguments of every environment the loop makes, unless `collect` or `eval` gives its own `env_kwargs`. */
    env_kwargs: EnvKwargsSchema.optional(),
    /** Artifact store root seen by the workers (default: the worker's `--store`, `$GYMFLOW_STORE`, `.gymflow/store`). */
    store: z.string().min(1).optional(),
    /** Scratch directory of the workers for trainer runs and checked-out artifacts (default: beside the store). */
    work_dir: z.string().min(1).optional(),
    /** Base seed of task order and episode seeds. */
    seed: z.number().int().default(0),
    task_queues: z
      .object({ cpu: z.string().min(1).default(DEFAULT_TASK_QUEUES.cpu), gpu: z.string().min(1).default(DEFAULT_TASK_QUEUES.gpu) })
      .strict()
      .default(DEFAULT_TASK_QUEUES),
    policy: z
      .object({
        /** The trainer's model section for the first iteration: `{ tiny: {...} }` or `{ path: DIR }`. */
        init: PolicyInitSchema,
        /** Act with this agent spec until the first training instead of exporting the initial model. */
        agent: agentSpec.optional(),
        /** Act through an OpenAI-compatible server of each checkpoint instead of its ONNX export. */
        serve: PolicyServeSchema.optional(),
      })
      .strict(),
    reward: RewardSectionSchema.default({ enabled: true, concurrency: 8 }),
    /** Defaults for every phase (a phase's own section fields win). */
    ...PartialStages,
    phases: z.array(RawPhaseSchema).min(1).optional(),
    eval: EvalSectionSchema.default({ split: 'heldout', repeats: 1, temperature: 0, baseline: true, concurrency: 4, seed: 0 }),
    target: TargetSchema.optional(),
    /** Training iterations in all (the baseline evaluation is not one). Default: the phases' iterations summed. */
    max_iterations: positiveInt.optional(),
    retention: RetentionSchema.optional(),
    rl: RlSectionSchema.optional(),
  })
  .strict();

/** A phase with every section complete. */
export interface PipelinePhase {
  name: string;
  iterations: number | undefined;
  collect: z.infer<typeof CollectSectionSchema>;
  export: z.infer<typeof ExportSectionSchema> & { format: 'sft' | 'rl' | 'dpo' };
  train: z.infer<typeof TrainSectionSchema>;
}

/** The validated configuration, defaults filled in, phases complete (see the module comment). */
export type PipelineConfig = Omit<z.infer<typeof RawConfigSchema>, 'phases' | 'collect' | 'export' | 'train' | 'max_iterations'> & {
  phases: PipelinePhase[];
  /** Training iterations in all. */
  max_iterations: number;
};

/** Trainer configuration keys the pipeline sets itself. */
const RESERVED_TRAIN_KEYS = ['data', 'output_dir', 'resume_from'] as const;

/** The zod schema of the whole document, with cross-field checks (phases complete, formats match commands). */
export const PipelineConfigSchema: z.ZodType<PipelineConfig, unknown> = RawConfigSchema.transform((raw, ctx): PipelineConfig => {
  const rawPhases = raw.phases ?? [{ name: 'main', iterations: undefined }];
  const phases: PipelinePhase[] = [];
  rawPhases.forEach((p, i) => {
    const where = raw.phases === undefined ? [] : ['phases', i];
    const trainIn = mergeSection(raw.train, p.train);
    const train = TrainSectionSchema.safeParse(trainIn);
    if (!train.success) {
      for (const issue of train.error.issues) {
        ctx.addIssue({ code: 'custom', message: `${issue.message}${raw.phases === undefined ? '' : ' (set it in the phase or in the top-level train section)'}`, path: [...where, 'train', ...issue.path] });
      }
      return;
    }
    for (const key of RESERVED_TRAIN_KEYS) {
      if (key in train.data.config) ctx.addIssue({ code: 'custom', message: `'${key}' is set by the pipeline; remove it`, path: [...where, 'train', 'config', key] });
    }
    const model = train.data.config['model'];
    if (model !== undefined && (typeof model !== 'object' || model === null || 'path' in model || 'tiny' in model)) {
      ctx.addIssue({ code: 'custom', message: "the model comes from policy.init and the previous iteration; only model.dtype / model.gradient_checkpointing / model.tokenizer may be set here", path: [...where, 'train', 'config', 'model'] });
    }
    const collect = CollectSectionSchema.parse(mergeSection(mergeSection(defined({ env_kwargs: raw.env_kwargs }), raw.collect), p.collect));
    const exp = ExportSectionSchema.parse(mergeSection(raw.export, p.export));
    const format = exp.format ?? train.data.command;
    if (format !== train.data.command) {
      ctx.addIssue({ code: 'custom', message: `export format '${format}' does not fit train command '${train.data.command}' (the trainer reads its own format)`, path: [...where, 'export', 'format'] });
    }
    if (format === 'rl' && collect.group_size < 2) {
      ctx.addIssue({ code: 'custom', message: 'rl needs groups of at least 2 episodes per task (advantages are relative to the group)', path: [...where, 'collect', 'group_size'] });
    }
    if (p.iterations === undefined && i < rawPhases.length - 1) {
      ctx.addIssue({ code: 'custom', message: 'only the last phase may leave iterations out', path: [...where, 'iterations'] });
    }
    phases.push({ name: p.name, iterations: p.iterations, collect, export: { ...exp, format }, train: train.data });
  });
  const fixed = phases.reduce((a, p) => a + (p.iterations ?? 0), 0);
  const open = phases.length > 0 && phases[phases.length - 1]?.iterations === undefined;
  if (raw.max_iterations === undefined && open) {
    ctx.addIssue({ code: 'custom', message: 'give max_iterations, or iterations for the last phase', path: ['max_iterations'] });
  }
  const names = new Set<string>();
  phases.forEach((p, i) => {
    if (names.has(p.name)) ctx.addIssue({ code: 'custom', message: `phase name '${p.name}' is used twice`, path: ['phases', i, 'name'] });
    names.add(p.name);
  });
  // `enabled` defaults to true, so only an explicit `enabled: false` can contradict `rules: true`.
  if (raw.reward.rules === true && !raw.reward.enabled) {
    ctx.addIssue({ code: 'custom', message: "'rules: true' and its older name 'enabled: false' disagree; keep one", path: ['reward', 'rules'] });
  }
  if (!rulesEnabled(raw.reward) && (raw.reward.judge !== undefined || raw.reward.learned !== undefined || raw.reward.calibration !== undefined)) {
    ctx.addIssue({ code: 'custom', message: 'the judge, learned and calibration layers add to the rule layer\'s score: turn rules on, or remove them', path: ['reward', 'rules'] });
  }
  if (raw.rl?.async !== undefined) {
    if (!phases.some((p) => p.train.command === 'rl')) {
      ctx.addIssue({ code: 'custom', message: 'asynchronous mode overlaps the collection of an rl iteration with the training before it, and no phase trains with rl', path: ['rl', 'async'] });
    }
    if (raw.policy.serve !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'not with policy.serve: the overlapped collection would serve one checkpoint on the GPU worker while another trains there; act through the ONNX export', path: ['rl', 'async'] });
    }
  }
  const { phases: _p, collect: _c, export: _e, train: _t, max_iterations, ...rest } = raw;
  const evalSection = rest.eval.env_kwargs === undefined && rest.env_kwargs !== undefined ? { ...rest.eval, env_kwargs: rest.env_kwargs } : rest.eval;
  return { ...rest, eval: evalSection, phases, max_iterations: max_iterations ?? Math.max(fixed, 1) };
});

/** A path element that asks a line lookup for the line of the key that follows it, not of its value. */
export const KEY = Symbol('key');

/** One problem as `source[:line] $.path: message`. */
function issueLine(source: string, path: readonly PropertyKey[], message: string, lineOf?: (path: readonly PropertyKey[]) => number | undefined): string {
  const jsonPath = `$${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}`;
  const line = lineOf?.(path);
  return `${source}${line === undefined ? '' : `:${line}`} ${jsonPath}: ${message}`;
}

/**
 * Validates a configuration value (already parsed from YAML/JSON, or received by a workflow) and fills in
 * the defaults. `source` names where it came from in error messages.
 *
 * @throws ConfigError listing every problem as `source $.field: what is wrong`.
 * @example
 * ```ts
 * const config = parsePipelineConfig({ name: 'demo', env: 'gymflow/tool-use-v0', policy: { init: { tiny: {} } }, train: { command: 'sft' } }, 'inline');
 * ```
 */
export function parsePipelineConfig(value: unknown, source: string): PipelineConfig {
  return parseWithLines(value, source, undefined);
}

/**
 * {@link parsePipelineConfig} with a line lookup for the messages (the file loader, `src/runtime/config-file.ts`,
 * passes the YAML document's): `lineOf(path)` is the line of the value at `path`, or with {@link KEY} before
 * the path's last element, the line of that key.
 */
export function parseWithLines(value: unknown, source: string, lineOf: ((path: readonly PropertyKey[]) => number | undefined) | undefined): PipelineConfig {
  return parseSectionWithLines(PipelineConfigSchema, value, source, lineOf, 'pipeline configuration');
}

/**
 * {@link parseWithLines} for any schema (a section of the configuration read from a file of its own, like the
 * `reward` section `gymflow reward rescore --config` reads), `what` naming it in the message; `prefix` is the
 * section's path in the value (`['reward']` when it sits in a whole configuration).
 *
 * @throws ConfigError listing every problem as `source[:line] $.field: what is wrong`.
 */
export function parseSectionWithLines<S extends z.ZodType>(
  schema: S,
  value: unknown,
  source: string,
  lineOf: ((path: readonly PropertyKey[]) => number | undefined) | undefined,
  what: string,
  prefix: readonly PropertyKey[] = [],
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // An unknown key is reported on its own line (zod puts the issue on the mapping that holds it).
  const lines = result.error.issues.map((issue) => {
    const at = [...prefix, ...issue.path];
    return issueLine(source, at, issue.message, lineOf === undefined ? undefined : (p) => (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined ? lineOf([...p, KEY, issue.keys[0]]) : undefined) ?? lineOf(p));
  });
  throw new ConfigError(`invalid ${what}:\n  ${lines.join('\n  ')}`);
}

