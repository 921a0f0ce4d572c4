import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pathExists } from '../../core/fs.js';
import { checkNewOutput, openOutput, type WriteOptions } from '../../core/output-file.js';

/**
 * Output helpers of the exporters: every file appears complete or not at all (temp file in the same
 * directory, fsync, rename) and a directory output is built beside its destination and renamed into
 * place.
 */

/**
 * Writes JSON Lines (one record per line) atomically (`openOutput`, with `options`; `-` is stdout); returns the
 * records written.
 */
export async function writeJsonl(file: string, records: Iterable<unknown>, options: WriteOptions = {}): Promise<number> {
  const out = await openOutput(file, options);
  let n = 0;
  try {
    for (const r of records) {
      await out.write(`${JSON.stringify(r)}\n`);
      n++;
    }
    await out.commit();
  } catch (err) {
    await out.abort();
    throw err;
  }
  return n;
}

/**
 * Builds a directory with `fill(tmpDir)` beside `dest`, then renames it into place. Whether an existing
 * `dest` may be replaced is core's `checkNewOutput` (`--force`); one that may is moved aside, then removed.
 */
export async function writeDirAtomic(dest: string, force: boolean, fill: (dir: string) => Promise<void>): Promise<void> {
  const abs = path.resolve(dest);
  await checkNewOutput(dest, { force, directory: true });
  const tmp = `${abs}.tmp-${process.pid}-${Date.now()}`;
  await mkdir(tmp, { recursive: true });
  try {
    await fill(tmp);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  if (await pathExists(abs)) {
    const old = `${abs}.old-${process.pid}-${Date.now()}`;
    await rename(abs, old);
    await rename(tmp, abs);
    await rm(old, { recursive: true, force: true });
  } else {
    await rename(tmp, abs);
  }
}
