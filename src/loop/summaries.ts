/**
 * One-line summaries of gymflow's workflows and activities, for the Temporal Web UI and CLI: a workflow's
 * `staticSummary` (set by the client that starts it) and each activity's `summary` (set where the workflow schedules
 * it), so that the UI's list and timeline say what each run and each activity is doing — iteration, stage,
 * environment — without opening a payload. Summaries are user metadata: replay does not compare them, so changing
 * their wording breaks no recorded history. Pure module: imported by workflows and by the CLI.
 */
import { STAGES, type ForkedFrom, type PipelineStatus, type StageName, type StageStatus } from './status.js';

/** The separator between a summary's parts. */
const SEP = ' · ';

/** Keeps a summary on one line (the UI's format is single-line): newlines and runs of spaces become one space. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `n noun`, with an `s` unless `n` is 1: `plural(3, 'iteration')` is `3 iterations`. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * The start summary of a pipeline run: its workflow type, experiment, environment and length.
 *
 * @example
 * pipelineSummary('trainingLoop', { name: 'demo', env: 'gymflow/tool-use-v0', max_iterations: 3 })
 * // 'trainingLoop demo · gymflow/tool-use-v0 · 3 iterations'
 */
export function pipelineSummary(
  workflow: 'trainingLoop' | 'pipeline',
  config: { readonly name: string; readonly env: string; readonly max_iterations: number },
  forkedFrom?: ForkedFrom,
): string {
  const parts = [`${workflow} ${config.name}`, config.env, workflow === 'pipeline' ? 'one pass' : plural(config.max_iterations, 'iteration')];
  if (forkedFrom !== undefined) parts.push(`fork of ${forkedFrom.workflowId} at iteration ${forkedFrom.iteration}`);
  return oneLine(parts.join(SEP));
}

/**
 * The start summary of an ingest run: its name, directory and export format.
 *
 * @example
 * ingestSummary({ name: 'agent-logs', dir: 'logs/', export: 'sft' }) // 'ingest agent-logs · logs/ → sft'
 */
export function ingestSummary(input: { readonly name: string; readonly dir: string; readonly export: string }): string {
  return oneLine(`ingest ${input.name}${SEP}${input.dir} → ${input.export}`);
}

/** Where in a loop an activity runs: the iteration (0 = the baseline or setup), the stage and the environment. */
export interface ActivityPlace {
  readonly iteration: number;
  /** The stage and, where there are several, which one (`collect shard 3/8`, `eval benchmark hle`). */
  readonly what: string;
  readonly env: string;
}

/**
 * An activity's summary in a pipeline run.
 *
 * @example
 * activitySummary({ iteration: 2, what: 'collect shard 3/8', env: 'gymflow/tool-use-v0' })
 * // 'iter 2 · collect shard 3/8 · gymflow/tool-use-v0'
 */
export function activitySummary(place: ActivityPlace): string {
  return oneLine([`iter ${place.iteration}`, place.what, place.env].join(SEP));
}

/** The longest error message the current details quote (the rest is in `pipeline_status`). */
const DETAILS_ERROR_CHARS = 200;

/** A stage with its progress: `collect (5/8 episodes)`. */
function stageWithProgress(name: string, st: StageStatus | undefined): string {
  const p = st?.progress;
  return p === undefined ? name : `${name} (${p.done}/${p.total} ${p.unit})`;
}

function isStageName(stage: string): stage is StageName {
  return (STAGES as readonly string[]).includes(stage);
}

/** What the run is doing now, in a few words: `train (12/40 steps)`, `paused before the next stage`, `failed in train: …`. */
function runState(s: PipelineStatus): string {
  const stage = isStageName(s.stage) ? stageWithProgress(s.stage, s.stages[s.stage]) : s.stage;
  switch (s.state) {
    case 'running':
    case 'starting':
      return stage === 'setup' ? 'setting up' : stage;
    case 'paused':
      // A pause waits at the next stage's start: a stage already running goes on to its end.
      return isStageName(s.stage) && s.stages[s.stage].state === 'running' ? `paused once ${stage} ends` : 'paused before the next stage';
    case 'cancelling':
      return `cancelling (${s.cancel?.mode ?? 'finish'}), at ${stage}`;
    case 'cancelled':
      return 'cancelled';
    case 'completed':
      return s.stopReason === undefined ? 'completed' : `completed: ${s.stopReason.replace('_', ' ')}`;
    case 'failed': {
      const e = s.lastError;
      if (e === undefined) return 'failed';
      const message = oneLine(e.message);
      return `failed in ${e.stage}: ${message.length > DETAILS_ERROR_CHARS ? `${message.slice(0, DETAILS_ERROR_CHARS)}…` : message}`;
    }
  }
}

/**
 * A run's *current details*, which the Temporal Web UI shows beside the summary (and `temporal workflow metadata`
 * prints), as Markdown: the iteration and what the run is doing, then the overlapped collection (asynchronous RL),
 * the last evaluated iteration and the best. Unlike the summary, which only the run a client started carries, they
 * follow every run of a loop, those after continue-as-new included. Workflows keep them up to date
 * (`followCurrentDetails` in workflows/runner.ts).
 *
 * @example
 * currentDetails(status)
 * // '**iteration 2 of 3** · train (12/40 steps) · run 3\n\n- last evaluated: iteration 1, success 0.625 [0.306, 0.863]'
 */
export function currentDetails(s: PipelineStatus): string {
  const where = s.iteration === 0 ? 'baseline evaluation' : s.workflow === 'pipeline' ? `one pass (iteration ${s.iteration})` : `iteration ${s.iteration} of ${s.maxIterations}`;
  const lines: string[] = [];
  if (s.next !== undefined) {
    const running = (['collect', 'tasks'] as const).find((n) => s.next?.stages[n].state === 'running');
    const what = s.next.error !== undefined ? `failed: ${oneLine(s.next.error)}` : running === undefined ? 'waiting' : stageWithProgress(running, s.next.stages[running]);
    lines.push(`- beside it, iteration ${s.next.iteration}'s collection by policy version ${s.next.policyVersion}: ${what}`);
  }
  const last = s.history.at(-1);
  if (last?.success !== undefined) {
    const { value, low, high } = last.success;
    lines.push(`- last evaluated: iteration ${last.iteration}, success ${value.toFixed(3)} [${low.toFixed(3)}, ${high.toFixed(3)}]`);
  }
  if (s.best !== undefined && s.best.iteration !== last?.iteration) lines.push(`- best: iteration ${s.best.iteration}, success ${s.best.success.toFixed(3)}`);
  const head = `**${where}** · ${runState(s)} · run ${s.run}`;
  return lines.length === 0 ? head : `${head}\n\n${lines.join('\n')}`;
}
