import type { ConversionProblem } from './adapter.js';
import { formatProblem } from './adapter.js';
import { checkTrajectory } from '../core/trajectory.js';
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
    for await (const record of streamJsonl(path, path, checkTrajectory)) {
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
