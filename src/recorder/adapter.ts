import type { Trajectory } from '../core/trajectory.js';

/**
 * The contract every log adapter implements: recognise a file from its head, and turn it into standard
 * trajectories (DESIGN.md §4), reporting what it could not use as {@link ConversionProblem}s instead of
 * throwing.
 */

/** What {@link LogAdapter.detect} sees of a file: its path, its first bytes and, when they parse, its first record. */
export interface LogSample {
  /** Path of the file (the extension is a hint, never proof). */
  path: string;
  /** The first bytes of the file as UTF-8 text (at most {@link DETECT_HEAD_BYTES}). */
  head: string;
  /**
   * The first record, when it could be parsed from the head: the whole document for a small JSON or
   * YAML file, or the first line of a JSONL file. Absent when the head is a truncated document.
   */
  firstRecord?: unknown;
  /** True when `head` holds the whole file. */
  complete: boolean;
}

/** How many bytes of a file detection reads. */
export const DETECT_HEAD_BYTES = 128 * 1024;

/** Options for one conversion. */
export interface ConvertOptions {
  /** Force an adapter by name instead of detecting the format. */
  format?: string;
  /** Overrides the model named in produced trajectories when the log does not record it. */
  model?: string;
}

/** What an adapter's `convert` gets besides the path. */
export interface ConvertContext {
  /** The file name used in problem reports and in `metadata.source.file` (usually the path as given). */
  file: string;
  options: ConvertOptions;
}

/**
 * Something an adapter could not convert, or converted with a caveat. `error` means data was skipped
 * (a malformed line, a trajectory that failed the schema); `warning` means it was kept in a degraded
 * form (unparseable tool arguments kept as a string, an observation with no call).
 */
export interface ConversionProblem {
  readonly kind: 'problem';
  severity: 'error' | 'warning';
  /** The file the problem is in. */
  file: string;
  /** 1-based line, for line-oriented formats (JSONL, or a JSON/YAML syntax error). */
  line?: number;
  /** JSON path of the offending value inside the record (`$` for the whole record). */
  path: string;
  message: string;
}

/** What a conversion yields: trajectories, interleaved with problems, in file order. */
export type ConversionItem = Trajectory | ConversionProblem;

/**
 * An adapter from one agent-log format to standard trajectories.
 *
 * @example
 * ```ts
 * for await (const item of adapter.convert('run.traj', { file: 'run.traj', options: {} })) {
 *   if (isConversionProblem(item)) console.error(formatProblem(item));
 *   else console.log(item.steps.length);
 * }
 * ```
 */
export interface LogAdapter {
  /** The format's id (`swe-agent`, `claude-code`, …); `--format` takes it. */
  readonly name: string;
  /** One line saying what the format is. */
  readonly description: string;
  /**
   * The `envId` written into produced trajectories (`external/<name>-v0`); absent for formats whose
   * records keep their own (gymflow JSONL).
   */
  readonly envId?: string;
  /** Confidence in [0, 1] that the sampled file is in this format; 0 when it certainly is not. */
  detect(sample: LogSample): number;
  /**
   * Converts the file at `path`. Line-oriented formats stream the file; whole-document formats (one
   * episode per file) read it at once. Never throws for bad input: problems are yielded.
   */
  convert(path: string, ctx: ConvertContext): AsyncIterable<ConversionItem>;
}

/** True when a conversion item is a problem rather than a trajectory. */
export function isConversionProblem(item: ConversionItem): item is ConversionProblem {
  return (item as { kind?: unknown }).kind === 'problem';
}

/** Builds a problem; `line` is left out when unknown. */
export function problem(
  file: string,
  path: string,
  message: string,
  options: { line?: number | undefined; severity?: 'error' | 'warning' } = {},
): ConversionProblem {
  const p: ConversionProblem = { kind: 'problem', severity: options.severity ?? 'error', file, path, message };
  if (options.line !== undefined) p.line = options.line;
  return p;
}

/** `file:line $.path: message` (or `file $.path: message` without a line), the convention for errors. */
export function formatProblem(p: ConversionProblem): string {
  const place = p.line !== undefined ? `${p.file}:${p.line}` : p.file;
  const tag = p.severity === 'warning' ? ' (warning)' : '';
  return `${place} ${p.path}: ${p.message}${tag}`;
}
