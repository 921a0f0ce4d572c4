import { stat } from 'node:fs/promises';
import type { ConversionProblem } from './adapter.js';
import { formatProblem, isConversionProblem } from './adapter.js';
import { convertPath } from './convert.js';
import { detectFormat } from './detect.js';
import { GymflowError } from '../core/errors.js';
import { defined } from '../core/defined.js';
import { checkTrajectoryJson } from '../core/trajectory.js';
import { streamJsonl } from '../core/jsonl-file.js';
import { jsonlProblem } from './jsonl.js';

/** The outcome of validating a trajectory JSONL file. */
export interface ValidationReport {
  file: string;
  /** Non-blank lines read. */
  records: number;
  /** Lines that are valid trajectories. */
  valid: number;
  /** Every problem, each with file, line and JSON path. */
  problems: ConversionProblem[];
}

/**
 * Validates a gymflow trajectory JSONL file line by line (streamed through core's `parseJsonlLines`;
 * the file is never held in memory). Each line must pass the trajectory schema and carry its own content
 * id. Every problem names the file, the line and the JSON path; `onProblem` sees them as they are found.
 *
 * @example
 * ```ts
 * const report = await validateFile('trajectories.jsonl');
 * for (const p of report.problems) console.error(formatProblem(p));
 * // trajectories.jsonl:17 $.steps[3].action.tool: Invalid input: expected string, received null
 * ```
 */
export async function validateFile(path: string, options: { onProblem?: (problem: ConversionProblem) => void } = {}): Promise<ValidationReport> {
  const report: ValidationReport = { file: path, records: 0, valid: 0, problems: [] };
  try {
    for await (const record of streamJsonl(path, path, checkTrajectoryJson)) {
      report.records += 1;
      if (record.ok) {
        report.valid += 1;
        continue;
      }
      for (const message of record.errors) {
        const p = jsonlProblem(path, record.line, message);
        report.problems.push(p);
        options.onProblem?.(p);
      }
    }
  } catch (err) {
    const p: ConversionProblem = { kind: 'problem', severity: 'error', file: path, path: '$', message: `cannot read file (${(err as Error).message})` };
    report.problems.push(p);
    options.onProblem?.(p);
  }
  return report;
}

/** The report's problems as `file:line $.path: message` lines. */
export function formatValidationReport(report: ValidationReport): string[] {
  return report.problems.map(formatProblem);
}

/** The outcome of validating an agent log against its format ({@link validateLog}). */
export interface LogValidationReport extends ValidationReport {
  /** The format it was checked against: given, or detected (`gymflow` for trajectory JSONL); null for a directory without one. */
  format: string | null;
}

/**
 * Checks an agent log (a file, or every file under a directory) against its format — given, or detected: a
 * gymflow trajectory file, or a file no adapter recognises, is validated line by line ({@link validateFile}:
 * the schema and the content id); another format is converted without writing anything, and every problem the
 * conversion meets (a malformed line, a record that does not fit the format, a trajectory failing the schema) is
 * reported with its file, line and JSON path. `records` counts the trajectories read or converted, `valid` those
 * without error.
 *
 * @example
 * ```ts
 * const report = await validateLog('runs/session.jsonl');
 * for (const p of report.problems) console.error(formatProblem(p)); // session.jsonl:12 $.message.content: …
 * ```
 */
export async function validateLog(path: string, options: { format?: string; onProblem?: (problem: ConversionProblem) => void; signal?: AbortSignal } = {}): Promise<LogValidationReport> {
  const isDir = await stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
  let format = options.format ?? null;
  if (!isDir && format === null) {
    const detection = await detectFormat(path).catch(() => undefined);
    format = detection?.adapter?.name ?? null;
  }
  if (!isDir && (format === null || format === 'gymflow')) {
    return { ...(await validateFile(path, defined({ onProblem: options.onProblem }))), format: 'gymflow' };
  }
  const report: LogValidationReport = { file: path, format, records: 0, valid: 0, problems: [] };
  for await (const item of convertPath(path, format === null ? {} : { format })) {
    if (options.signal?.aborted === true) throw new GymflowError('CANCELLED', `validate: cancelled after ${report.records} trajectories of ${path}`);
    if (isConversionProblem(item)) {
      report.problems.push(item);
      options.onProblem?.(item);
      continue;
    }
    report.records += 1;
    report.valid += 1;
  }
  return report;
}
