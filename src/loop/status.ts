/**
 * What the `pipeline_status` query answers, the compact state `trainingLoop` carries across `continueAsNew`,
 * and the pure helpers that update them. Pure module (no Node built-ins, no I/O): workflows import it.
 */

/** The stages of one pass, in order. `policy` exports the trained checkpoint to ONNX for the next collection. */
export const STAGES = ['tasks', 'collect', 'reward', 'export', 'train', 'policy', 'eval'] as const;
/** One of {@link STAGES}. */
export type StageName = (typeof STAGES)[number];

/** Where a stage is. `cancelled`: stopped by a `cancel` signal while it ran; `skipped`: not needed in this pass. */
export type StageState = 'pending' | 'running' | 'done' | 'failed' | 'cancelled' | 'skipped';

/** One stage of the current pass. */
export interface StageStatus {
  state: StageState;
  /** ISO time the stage started. */
  startedAt?: string;
  /** Wall time, set when the stage ended (or so far, at query time, for a running one). */
  durationMs?: number;
  /** Units done / total: shards and episodes for collect, steps for train, episodes for eval. */
  progress?: { done: number; total: number; unit: string };
  /** The artifact the stage produced. */
  ref?: string;
  /** A short note (the shard count, the trainer's loss, why it was skipped). */
  note?: string;
}

/** The policy a pass starts from: artifact refs only (activities check them out where they run). */
export interface PolicyState {
  /** Store ref of the model directory (a `checkpoint` tree); absent for an external `policy.init.path`. */
  checkpointRef?: string | undefined;
  /** The external model directory of `policy.init.path`, until the first training stores one. */
  checkpointPath?: string | undefined;
  /** Store ref of the ONNX export of the checkpoint (a `policy` tree), acted with through `local:<dir>`. */
  onnxRef?: string | undefined;
  /** An explicit agent spec standing in for the policy (`policy.agent`), until the first training. */
  agent?: string | undefined;
  /** The iteration that produced it (0: the initial policy). */
  iteration: number;
}

/** A success rate with its confidence interval. */
export interface RateWithCi {
  value: number;
  low: number;
  high: number;
  n: number;
}

/** The compact metrics of one iteration kept in the history (a few hundred bytes). */
export interface IterationMetrics {
  iteration: number;
  phase: string;
  /** Trainer command (`baseline` for iteration 0). */
  algorithm: string;
  /** Held-out (eval split) success, Wilson interval. */
  success?: RateWithCi;
  /** Mean reward of the evaluation episodes. */
  evalReward?: number;
  /** Mean steps of the evaluation episodes. */
  evalSteps?: number;
  /** pass^1 … pass^k of the evaluation (τ-bench's metric), when `eval.repeats` k is above 1; bootstrap intervals. */
  passK?: { k: number; value: number; low: number; high: number }[];
  /** The RMS calibration error of the evaluation's stated confidences (HLE's), when its environment reads them. */
  calibrationError?: number;
  /** The `eval.benchmarks`, by name, in configuration order; present only when the configuration has some. */
  benchmarks?: Record<string, BenchmarkMetrics>;
  /** Collection: episodes, success rate and mean reward of the rollouts trained on. */
  rollouts?: { episodes: number; success: number; meanReward: number; meanSteps: number };
  /**
   * Trainer: last loss, optimizer steps, and (RL) the policy's entropy at the last step and, on the rollout's
   * own tokens, the rollout engine's gap to the trainer (`mismatch_kl`, docs/trainer.md "Rollout correction").
   */
  train?: TrainMetrics;
  /**
   * Asynchronous RL (`rl.async`): how far behind the policy its training updated the trained-on steps' policy was
   * (`max`, in versions), trajectories dropped past `max_staleness`, and the time its collection took while the
   * iteration before it trained (`collectMs`, absent for a collection of its own).
   */
  staleness?: { max: number; dropped: number; collectMs?: number };
  /** Wall time of each stage of the iteration that ran (the overlapped collection's is `staleness.collectMs`). */
  stageMs?: Partial<Record<StageName, number>>;
  /** Wall time of the iteration. */
  wallMs: number;
  /** Refs of what the iteration made. */
  refs: Partial<Record<'tasks' | 'rollouts' | 'scored' | 'dataset' | 'checkpoint' | 'policy' | 'eval', string>>;
}

/** One benchmark's numbers in an iteration: as the main evaluation's, or why it has none. */
export interface BenchmarkMetrics {
  /** Success (for a question set: accuracy), Wilson interval; absent when the benchmark failed. */
  success?: RateWithCi;
  evalReward?: number;
  evalSteps?: number;
  passK?: { k: number; value: number; low: number; high: number }[];
  calibrationError?: number;
  /** The `eval` artifact. */
  ref?: string;
  /** Why it has no numbers: the evaluation failed through its retries (the loop goes on without them). */
  error?: string;
}

/** The last failure the workflow saw (a retried activity's last error is only in its own history). */
export interface LastError {
  stage: StageName | 'setup';
  message: string;
  type?: string;
  at: string;
}

/** What `cancel` asked for and what it did. */
export interface CancelStatus {
  /** `finish`: let the running activity finish, then stop; `abort`: cancel it (the trainer is killed). */
  mode: 'finish' | 'abort';
  requestedAt: string;
  reason?: string;
  /** The stage running when the request came, if any. */
  stage?: StageName;
  /** What happened to the running activity: it finished, was cancelled, or none was running. */
  activity?: 'finished' | 'cancelled' | 'none';
  /** When a later `abort` turned this `finish` request into an abort (`mode` is then `abort`). */
  escalatedAt?: string;
}

/** Why the loop stopped. */
export type StopReason = 'target' | 'max_iterations' | 'cancelled' | 'pass_done';

/** The answer of the `pipeline_status` query. */
export interface PipelineStatus {
  workflow: 'trainingLoop' | 'pipeline';
  experiment: string;
  env: string;
  /** Overall state. */
  state: 'starting' | 'running' | 'paused' | 'cancelling' | 'cancelled' | 'completed' | 'failed';
  /** The stage running (or about to run), `setup` before the first pass, `done` at the end. */
  stage: StageName | 'setup' | 'baseline' | 'done';
  /** 0: the baseline evaluation; 1…: training iterations. */
  iteration: number;
  maxIterations: number;
  phase?: string;
  /** The current pass's trainer command. */
  algorithm?: string;
  paused: boolean;
  stages: Record<StageName, StageStatus>;
  /** Progress of the current stage (a copy of its `progress`). */
  progress?: { done: number; total: number; unit: string };
  /** Refs made so far in this pass. */
  artifacts: IterationMetrics['refs'];
  policy: PolicyState;
  /** Every finished iteration (the baseline first). */
  history: IterationMetrics[];
  best?: { iteration: number; success: number };
  lastError?: LastError;
  /** What `retention` pruned after this run's iteration, or why it could not (the loop goes on regardless). */
  retention?: { pruned: string[]; error?: string };
  cancel?: CancelStatus;
  stopReason?: StopReason;
  /** Runs of this loop so far (continueAsNew count + 1). */
  run: number;
  /** ISO time this workflow run started and the loop's first run started. */
  runStartedAt: string;
  loopStartedAt: string;
  /** The run and iteration this loop was forked from (`gymflow pipeline fork`); absent for a loop started afresh. */
  forkedFrom?: ForkedFrom;
  /** Asynchronous RL: the next iteration's collection, running beside this iteration's training (absent otherwise). */
  next?: NextCollectionStatus;
}

/** The collection of the next iteration while this one trains (`rl.async`): its stages and the policy acting. */
export interface NextCollectionStatus {
  iteration: number;
  /** The policy version acting: the newest checkpoint there was when the collection started. */
  policyVersion: number;
  stages: Record<'tasks' | 'collect', StageStatus>;
  /** Why the overlapped collection produced nothing (the next iteration then collects for itself). */
  error?: string;
}

/**
 * Asynchronous RL: rollouts collected for iteration `iteration` while the iteration before it trained, carried to
 * the run of `iteration` in its `LoopState` (refs only).
 */
export interface PendingRollouts {
  iteration: number;
  /** The rollout shards' sets, in shard order. */
  shards: string[];
  /** The task plan's ref. */
  tasks: string;
  /** The policy version that acted. */
  policyVersion: number;
  episodes: number;
  /** Wall time of the task plan and the collection. */
  collectMs: number;
}

/** Where a forked loop (`gymflow pipeline fork`, src/loop/fork.ts) branched off: the old run and its iteration. */
export interface ForkedFrom {
  workflowId: string;
  /** The old run's iteration whose checkpoint (and, rescored, rollouts) the fork starts from. */
  iteration: number;
}

/** The state `trainingLoop` passes to its next run through `continueAsNew`: refs and the metrics history. */
export interface LoopState {
  /** The next iteration to run (0 = the baseline evaluation). */
  iteration: number;
  policy: PolicyState;
  history: IterationMetrics[];
  paused: boolean;
  /** How many runs came before (continueAsNew count). */
  runs: number;
  loopStartedAt: string;
  /** The setup checks and search attributes were done by an earlier run. */
  setupDone: boolean;
  /** A forked loop's origin, carried through every run (absent otherwise: recorded histories replay). */
  forkedFrom?: ForkedFrom;
  /**
   * Stored rollouts the next iteration scores (with this configuration's `reward`) instead of planning tasks and
   * collecting: a fork's first iteration over its origin's rollouts. Dropped once that iteration ran.
   */
  reuseRollouts?: ReusedRollouts;
  /**
   * Asynchronous RL: the rollouts of iteration `pending.iteration` (the next to run), collected while the iteration
   * before it trained. A run of another iteration, or without `rl.async`, collects for itself instead.
   */
  pending?: PendingRollouts;
}

/** The rollouts an iteration reuses instead of collecting ({@link LoopState.reuseRollouts}). */
export interface ReusedRollouts {
  /** The `trajectories` or `scored-trajectories` set to score again. */
  ref: string;
  /** The task set they were collected on (the iteration's `tasks` ref), when known. */
  tasks?: string;
}

/** All stages pending. */
export function freshStages(): Record<StageName, StageStatus> {
  return Object.fromEntries(STAGES.map((s) => [s, { state: 'pending' }])) as Record<StageName, StageStatus>;
}

/** The trainer's numbers of an iteration (see {@link IterationMetrics.train}). */
export interface TrainMetrics {
  loss: number | null;
  steps: number;
  entropy?: number;
  mismatchKl?: number;
}

/** What a train result or heartbeat says of the trainer's last numbers; RL's are null or absent for the others. */
interface TrainerNumbers {
  loss: number | null;
  entropy?: number | null | undefined;
  mismatchKl?: number | null | undefined;
  cutSamples?: number | null | undefined;
}

/** A number the trainer reported, or undefined for one it did not (null) or a record from before it did. */
function reported(x: number | null | undefined): number | undefined {
  return x ?? undefined;
}

/**
 * An iteration's {@link TrainMetrics} from a train result: the RL numbers only when the trainer reported them
 * (results recorded before it did have none).
 */
export function trainMetrics(t: TrainerNumbers & { steps: number }): TrainMetrics {
  const m: TrainMetrics = { loss: t.loss, steps: t.steps };
  const entropy = reported(t.entropy);
  const mismatchKl = reported(t.mismatchKl);
  if (entropy !== undefined) m.entropy = entropy;
  if (mismatchKl !== undefined) m.mismatchKl = mismatchKl;
  return m;
}

/** The rollout engine's gap to the trainer, to two significant digits (a healthy one is ~1e-9, a broken one ~0.1). */
export function formatMismatch(kl: number): string {
  return kl.toPrecision(2);
}

/**
 * The trainer's last numbers for a note: `, loss 0.4512, entropy 1.2034, mismatch 3.1e-9, 5 samples cut at
 * max_length`, each only when known (and the cut ones only when there are some).
 */
export function trainNumbers(t: TrainerNumbers): string {
  const entropy = reported(t.entropy);
  const mismatchKl = reported(t.mismatchKl);
  const cut = t.cutSamples ?? 0;
  return [
    t.loss === null ? '' : `, loss ${t.loss.toFixed(4)}`,
    entropy === undefined ? '' : `, entropy ${entropy.toFixed(4)}`,
    mismatchKl === undefined ? '' : `, mismatch ${formatMismatch(mismatchKl)}`,
    cut > 0 ? `, ${cut} sample${cut === 1 ? '' : 's'} cut at max_length` : '',
  ].join('');
}

/** The best held-out success of a history (the highest; the earliest of ties). */
export function bestOf(history: readonly IterationMetrics[]): { iteration: number; success: number } | undefined {
  let best: { iteration: number; success: number } | undefined;
  for (const h of history) {
    if (h.success === undefined) continue;
    if (best === undefined || h.success.value > best.success) best = { iteration: h.iteration, success: h.success.value };
  }
  return best;
}

/** The value of the target metric in one iteration's metrics, if it was measured. */
export function targetValue(metrics: IterationMetrics, metric: 'heldout_success' | 'heldout_reward'): number | undefined {
  return metric === 'heldout_success' ? metrics.success?.value : metrics.evalReward;
}

/** Keeps the history compact: at most `max` entries (the baseline, the best and the most recent are kept). */
export function compactHistory(history: readonly IterationMetrics[], max = 200): IterationMetrics[] {
  if (history.length <= max) return [...history];
  const best = bestOf(history)?.iteration;
  const first = history[0];
  const keep = history.slice(history.length - (max - 2));
  const head = [first, ...history.filter((h) => h.iteration === best)].filter((h): h is IterationMetrics => h !== undefined && !keep.includes(h));
  return [...new Set([...head, ...keep])].slice(-max);
}

/**
 * An iteration's numbers as the loop's curves: `eval/success` (held out; with `eval/success_low` and
 * `eval/success_high`, its Wilson interval), `eval/reward`, `eval/steps`, `eval/pass_hat_K` (pass^K, K = 1 … `eval.repeats`,
 * when above 1), `eval/calibration_error`, per benchmark `eval/<name>/success` (with `_low`, `_high`), `eval/<name>/reward`,
 * `eval/<name>/steps`, `eval/<name>/pass_hat_K` and `eval/<name>/calibration_error`, `rollouts/success`, `rollouts/reward`,
 * `rollouts/steps`, `rollouts/episodes`, `train/loss`, `train/steps`, `train/entropy`, `train/mismatch_kl` and
 * `wall_minutes`, each where the iteration has it (the baseline has no rollouts and no training).
 */
export function loopScalars(m: IterationMetrics): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (tag: string, v: number | null | undefined): void => {
    // JSON carries no NaN or infinity (a diverged loss arrives as null), and an activity's input is JSON
    if (typeof v === 'number' && Number.isFinite(v)) out[tag] = v;
  };
  put('eval/success', m.success?.value);
  put('eval/success_low', m.success?.low);
  put('eval/success_high', m.success?.high);
  put('eval/reward', m.evalReward);
  put('eval/steps', m.evalSteps);
  for (const p of m.passK ?? []) put(`eval/pass_hat_${p.k}`, p.value);
  put('eval/calibration_error', m.calibrationError);
  for (const [name, b] of Object.entries(m.benchmarks ?? {})) {
    put(`eval/${name}/success`, b.success?.value);
    put(`eval/${name}/success_low`, b.success?.low);
    put(`eval/${name}/success_high`, b.success?.high);
    put(`eval/${name}/reward`, b.evalReward);
    put(`eval/${name}/steps`, b.evalSteps);
    for (const p of b.passK ?? []) put(`eval/${name}/pass_hat_${p.k}`, p.value);
    put(`eval/${name}/calibration_error`, b.calibrationError);
  }
  put('rollouts/success', m.rollouts?.success);
  put('rollouts/reward', m.rollouts?.meanReward);
  put('rollouts/steps', m.rollouts?.meanSteps);
  put('rollouts/episodes', m.rollouts?.episodes);
  put('train/loss', m.train?.loss);
  put('train/steps', m.train?.steps);
  put('train/entropy', m.train?.entropy);
  put('train/mismatch_kl', m.train?.mismatchKl);
  put('wall_minutes', m.wallMs / 60_000);
  return out;
}

/** An evaluation for a note: `success 0.600 [0.231, 0.882]`, with `, pass^K v` and `, calibration error c` when measured. */
export function evalNote(e: { success: RateWithCi; passK?: readonly { k: number; value: number }[] | undefined; calibrationError?: number | undefined }): string {
  const last = e.passK?.[e.passK.length - 1];
  const passK = last === undefined || last.k < 2 ? '' : `, pass^${last.k} ${last.value.toFixed(3)}`;
  const calibration = e.calibrationError === undefined ? '' : `, calibration error ${e.calibrationError.toFixed(3)}`;
  return `success ${e.success.value.toFixed(3)} [${e.success.low.toFixed(3)}, ${e.success.high.toFixed(3)}]${passK}${calibration}`;
}

/** A benchmark for a note: `hle: success 0.600 [0.231, 0.882], calibration error 0.200`, or `hle: failed: …`. */
export function benchmarkNote(name: string, b: BenchmarkMetrics): string {
  return b.success === undefined ? `${name}: failed: ${b.error ?? 'no result'}` : `${name}: ${evalNote({ ...b, success: b.success })}`;
}

/** What the reward stage's judge reports (`judgeRollouts`' result, as far as the note needs it). */
export interface JudgeNoteInput {
  judge: string;
  steps: number;
  judged: number;
  usage: { requests: number; cacheHits: number; inputTokens: number; outputTokens: number };
  budgetExhausted: boolean;
}

/**
 * The reward stage's note on the judge: `judge anthropic:claude-haiku-4-5: 40/40 steps, 12 calls, 28 cached, 9100
 * tokens`, or, when `reward.judge.budget` stopped it, `judge budget exhausted after 12 calls (9100 tokens): 12/40
 * steps judged, the rest scored without the judge`.
 */
export function judgeNote(j: JudgeNoteInput): string {
  const tokens = j.usage.inputTokens + j.usage.outputTokens;
  if (j.budgetExhausted) {
    return `judge budget exhausted after ${j.usage.requests} calls (${tokens} tokens): ${j.judged}/${j.steps} steps judged, the rest scored without the judge`;
  }
  return `judge ${j.judge}: ${j.judged}/${j.steps} steps, ${j.usage.requests} calls, ${j.usage.cacheHits} cached, ${tokens} tokens`;
}
