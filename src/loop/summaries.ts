/**
 * One-line summaries of gymflow's workflows and activities, for the Temporal Web UI and CLI: a workflow's
 * `staticSummary` (set by the client that starts it) and each activity's `summary` (set where the workflow schedules
 * it), so that the UI's list and timeline say what each run and each activity is doing — iteration, stage,
 * environment — without opening a payload. Summaries are user metadata: replay does not compare them, so changing
 * their wording breaks no recorded history. Pure module: imported by workflows and by the CLI.
 */
import type { ForkedFrom } from './status.js';

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
