/**
 * Agent logs to scored trajectories in one pass: convert (the recorder's adapters, format detected or given),
 * validate (the trajectory schema and content id), score (the reward layers configured). `gymflow record process`
 * and the MCP tools `process_log` / `process_logs_batch` run it.
 */
import { setImmediate } from 'node:timers/promises';
import { GymflowError, SchemaError } from '../core/errors.js';
import { checkTrajectory, type Trajectory } from '../core/trajectory.js';
import type { ConversionItem, ConversionProblem, ConvertOptions } from '../recorder/adapter.js';
import { isConversionProblem, problem } from '../recorder/adapter.js';
import { convertPath } from '../recorder/convert.js';
import { writeJsonl } from '../recorder/write.js';
import { scoreTrajectory } from '../reward/score.js';
import type { ScoreOptions } from '../reward/types.js';

/** Options of {@link processLogs}. */
export interface ProcessLogsOptions {
  /** Adapter and model name for the conversion (default: detected per file). */
  convert?: ConvertOptions;
  /** The reward layers (profile, judge, calibration, learned model). */
  score: ScoreOptions;
  /** Replace an existing output file (default: an error, as the CLI's outputs). */
  replace?: boolean;
  /** After each trajectory scored: how many so far. */
  onTrajectory?: (scored: number, trajectory: Trajectory) => void | Promise<void>;
  /** Stops before the next trajectory: nothing is written, a `CANCELLED` error. */
  signal?: AbortSignal;
}

/** One scored trajectory, in brief. */
export interface ProcessedTrajectory {
  id: string;
  task: string;
  file: string | null;
  steps: number;
  success: boolean;
  reward: number | null;
}

/** What {@link processLogs} did. */
export interface ProcessLogsSummary {
  /** Trajectories converted, valid and scored (and written). */
  scored: number;
  /** Whether `out` was written (not when nothing converted: an existing file is left as it was). */
  written: boolean;
  /** Every problem: the conversion's and the validation's, each with file, line (when known) and JSON path. */
  problems: ConversionProblem[];
  /** Problems of severity `error` (records left out). */
  errors: number;
  /** Each scored trajectory, in order. */
  trajectories: ProcessedTrajectory[];
  /** The mean of `reward.total` over them (null when none). */
  meanReward: number | null;
}

/** The source file a converted trajectory names (`metadata.source.file`), if any. */
function sourceFile(t: Trajectory): string | null {
  const source = (t.metadata as { source?: { file?: unknown } } | undefined)?.source;
  return typeof source?.file === 'string' ? source.file : null;
}

/** The line of its source file a converted trajectory names (`metadata.source.line`), if any. */
function sourceLine(t: Trajectory): number | undefined {
  const source = (t.metadata as { source?: { line?: unknown } } | undefined)?.source;
  return typeof source?.line === 'number' ? source.line : undefined;
}

/**
 * Converts the log at `path` (a file, or every file under a directory), validates and scores each trajectory, and
 * writes the scored trajectories to `out` as JSONL (atomically; nothing when none converts). A trajectory that fails
 * validation is left out and reported with the file it came from and the JSON path.
 *
 * @throws GymflowError `CANCELLED` when `signal` stops it (nothing is written); errors of the judge or the learned
 *   model propagate.
 */
export async function processLogs(path: string, out: string, options: ProcessLogsOptions): Promise<ProcessLogsSummary> {
  const summary: ProcessLogsSummary = { scored: 0, written: false, problems: [], errors: 0, trajectories: [], meanReward: null };
  const note = (p: ConversionProblem): void => {
    summary.problems.push(p);
    if (p.severity === 'error') summary.errors += 1;
  };
  async function* scored(): AsyncGenerator<ConversionItem> {
    for await (const item of convertPath(path, options.convert ?? {}, { exclude: [out] })) {
      // Scoring never waits on I/O: a turn of the event loop lets a cancellation (the signal) arrive.
      if (options.signal !== undefined) await setImmediate();
      if (options.signal?.aborted === true) throw new GymflowError('CANCELLED', `process: cancelled after ${summary.scored} trajectories of ${path}`);
      if (isConversionProblem(item)) {
        yield item;
        continue;
      }
      const file = sourceFile(item) ?? path;
      let valid: Trajectory;
      try {
        valid = checkTrajectory(item, file);
      } catch (err) {
        const issues = err instanceof SchemaError ? err.issues : [(err as Error).message];
        for (const issue of issues) {
          // `place $.path: message`, the place being the file.
          const m = /^(.*?) (\$\S*): (.*)$/s.exec(issue);
          yield problem(file, m?.[2] ?? '$', m?.[3] ?? issue, { line: sourceLine(item) });
        }
        continue;
      }
      const t = await scoreTrajectory(valid, options.score);
      summary.scored += 1;
      summary.trajectories.push({ id: t.id, task: t.task.id, file: sourceFile(t), steps: t.steps.length, success: t.outcome.success, reward: t.reward?.total ?? null });
      await options.onTrajectory?.(summary.scored, t);
      yield t;
    }
  }
  const written = await writeJsonl(scored(), out, { onProblem: note, keepWhenEmpty: true, replace: options.replace === true });
  summary.written = written.committed;
  const rewards = summary.trajectories.flatMap((t) => (t.reward === null ? [] : [t.reward]));
  summary.meanReward = rewards.length === 0 ? null : rewards.reduce((a, b) => a + b, 0) / rewards.length;
  return summary;
}
