import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { findInvalidUtf8 } from '../core/jsonl-file.js';
import { realPathOf } from '../core/output-file.js';
import type { ConversionItem, ConvertOptions, LogAdapter } from './adapter.js';
import { problem } from './adapter.js';
import { detectFormat } from './detect.js';
import { adapterNames, getAdapter } from './registry.js';

/**
 * Converts one file: the adapter named by `options.format`, or the detected one. Yields trajectories and
 * problems in file order; never throws for bad input (an unknown format, an unreadable file, even an
 * adapter bug become problems). A file that is not all UTF-8 gets a warning first, naming the first bad byte.
 *
 * @example
 * ```ts
 * for await (const item of convertFile('run.traj')) {
 *   if (isConversionProblem(item)) console.error(formatProblem(item));
 * }
 * ```
 */
export async function* convertFile(path: string, options: ConvertOptions = {}): AsyncGenerator<ConversionItem> {
  let adapter: LogAdapter | undefined;
  if (options.format !== undefined) {
    adapter = getAdapter(options.format);
    if (!adapter) {
      yield problem(path, '$', `unknown format "${options.format}" (known: ${adapterNames().join(', ')})`);
      return;
    }
  } else {
    try {
      const detection = await detectFormat(path);
      adapter = detection.adapter;
      if (!adapter) {
        const guess = detection.candidates[0];
        yield problem(path, '$', `not a recognised agent log${guess ? ` (best guess ${guess.name} at ${guess.confidence.toFixed(2)})` : ''}; pass a format to force one`);
        return;
      }
    } catch (err) {
      yield problem(path, '$', `cannot read file (${(err as Error).message})`);
      return;
    }
  }
  try {
    // Decoding turns bytes that are not UTF-8 into U+FFFD; the conversion goes on, but says where.
    const bad = await findInvalidUtf8(path).catch(() => undefined); // an unreadable file is the adapter's to report
    if (bad) yield problem(path, '$', `not UTF-8 at byte ${bad.offset}; such bytes become U+FFFD in the trajectories`, { line: bad.line, severity: 'warning' });
    yield* adapter.convert(path, { file: path, options });
  } catch (err) {
    yield problem(path, '$', `${adapter.name} adapter failed: ${(err as Error).message}`);
  }
}

/** How {@link convertPath} walks a directory. */
export interface WalkOptions {
  /**
   * Files to leave out wherever the walk meets them (links resolved): the output being written, when it
   * lies inside the directory converted, so a run never reads its own output back in.
   */
  exclude?: readonly string[];
}

/**
 * Converts a file, or every file under a directory (recursively, in sorted order, skipping dotfiles and
 * following links). In a directory, files no adapter recognises are reported as warnings and skipped.
 */
export async function* convertPath(path: string, options: ConvertOptions = {}, walk: WalkOptions = {}): AsyncGenerator<ConversionItem> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    yield problem(path, '$', `cannot read path (${(err as Error).message})`);
    return;
  }
  if (!info.isDirectory()) {
    yield* convertFile(path, options);
    return;
  }
  const exclude = new Set(await Promise.all((walk.exclude ?? []).map(realPathOf)));
  for await (const file of walkFiles(path)) {
    if (exclude.has(await realPathOf(file))) continue;
    if (options.format === undefined) {
      const detection = await detectFormat(file).catch((err: unknown) => err as Error);
      if (detection instanceof Error || !detection.adapter) {
        const why = detection instanceof Error ? `cannot read file (${detection.message})` : 'not a recognised agent log';
        yield problem(file, '$', `skipped: ${why}`, { severity: 'warning' });
        continue;
      }
      yield* convertFile(file, { ...options, format: detection.adapter.name });
    } else {
      yield* convertFile(file, options);
    }
  }
}

/**
 * The regular files under `dir`, depth first, sorted by name, without dotfiles. Links to files and
 * directories are followed, and a directory already on the way down (a link cycle) is not entered again.
 * A dangling link is yielded like a file, so that reading it reports the problem.
 */
export async function* walkFiles(dir: string, ancestors: ReadonlySet<string> = new Set()): AsyncGenerator<string> {
  const real = await realpath(dir);
  if (ancestors.has(real)) return;
  const below = new Set(ancestors).add(real);
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    const kind = entry.isSymbolicLink() ? await stat(full).catch(() => undefined) : entry;
    if (kind === undefined) yield full;
    else if (kind.isDirectory()) yield* walkFiles(full, below);
    else if (kind.isFile()) yield full;
  }
}
