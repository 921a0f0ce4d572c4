import { randomBytes } from 'node:crypto';
import { readdir, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { atomicWrite, fsyncDir, isErrno, processAlive, writeSynced } from '../../core/fs.js';

/**
 * The artifact store's temp files. Every file the store publishes is written with the primitives of
 * `src/core/fs.ts` (temp file → fsync → rename → fsync of the directory), its temp file in one `tmp/`
 * directory at the store root rather than beside its destination: it is on the same filesystem (the root is
 * one directory tree), so the rename is just as atomic, and cleaning up after a crashed writer is a scan of
 * one small directory instead of every shard.
 */

/** Subdirectory of the store root that holds in-flight temp files. */
export const TMP_DIR = 'tmp';

const TMP_SUFFIX = '.tmp';
const HOST = hostname().replace(/[^A-Za-z0-9-]/g, '_').slice(0, 63) || 'host';

/**
 * A fresh temp path under `<root>/tmp/`, named `<host>.<pid>.<random>.tmp` so that a later cleanup can
 * tell whether its writer is still alive.
 */
export function tempPath(root: string): string {
  return path.join(root, TMP_DIR, `${HOST}.${process.pid}.${randomBytes(8).toString('hex')}${TMP_SUFFIX}`);
}

/** Writes `data` to a fresh temp file and fsyncs it; returns the temp path. */
export async function writeTemp(root: string, data: string | Uint8Array, mode = 0o444): Promise<string> {
  const tmp = tempPath(root);
  await writeSynced(tmp, data, mode);
  return tmp;
}

/** Atomically publishes `data` at `dest` through a temp file of the store at `root` (`atomicWrite`). */
export async function writeFileAtomic(root: string, dest: string, data: string | Uint8Array, mode = 0o444): Promise<void> {
  await atomicWrite(dest, data, { tmp: tempPath(root), mode });
}

/** What {@link cleanTempFiles} removed and kept. */
export interface TempCleanup {
  removed: string[];
  kept: number;
}

/**
 * Removes temp files left by writers that are gone: on this host, those whose process no longer
 * exists; from any host, those not modified for `staleMs` (default one hour), which covers writers on
 * other hosts of a shared store and pid reuse here.
 */
export async function cleanTempFiles(root: string, options: { staleMs?: number; now?: number } = {}): Promise<TempCleanup> {
  const dir = path.join(root, TMP_DIR);
  const staleMs = options.staleMs ?? 3_600_000;
  const now = options.now ?? Date.now();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { removed: [], kept: 0 };
    throw err;
  }
  const removed: string[] = [];
  let kept = 0;
  for (const name of names) {
    const file = path.join(dir, name);
    const owner = parseTempName(name);
    let dead = false;
    if (owner && owner.host === HOST) dead = owner.pid !== process.pid && !processAlive(owner.pid);
    if (!dead) {
      try {
        dead = now - (await stat(file)).mtimeMs >= staleMs;
      } catch (err) {
        if (isErrno(err, 'ENOENT')) continue;
        throw err;
      }
    }
    if (!dead) {
      kept++;
      continue;
    }
    try {
      await unlink(file);
      removed.push(file);
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
    }
  }
  if (removed.length > 0) await fsyncDir(dir);
  return { removed, kept };
}

function parseTempName(name: string): { host: string; pid: number } | undefined {
  const m = /^(.+)\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name);
  if (!m) return undefined;
  return { host: m[1] as string, pid: Number(m[2]) };
}
