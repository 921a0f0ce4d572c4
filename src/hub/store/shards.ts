import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir, isErrno } from '../../core/fs.js';
import { mapPool } from '../pool.js';
import { indexPath, objectPath, refFromShard } from './layout.js';

/**
 * Listing the store's sharded directories (`objects/ab/cdef…`, `index/ab/cdef….json`; layout.ts): what
 * `list`, `gc` and `verify` walk.
 */

/** File operations in flight at once when walking or fsyncing shards. */
export const IO_CONCURRENCY = 16;

/** One file of a shard directory and the ref it is named for. */
export interface ShardFile {
  ref: string;
  file: string;
  size: number;
  mtimeMs: number;
}

/**
 * Every file of `objects/` or `index/` that is named for a ref, sorted by ref. Stray files are left out
 * ({@link strayObjectFiles} lists those of `objects/`), and so is a file removed while the walk runs.
 */
export async function shardFiles(root: string, top: 'objects' | 'index'): Promise<ShardFile[]> {
  const base = path.join(root, top);
  const shards = await readdirOrEmpty(base);
  const out: ShardFile[] = [];
  await mapPool(shards, IO_CONCURRENCY, async (shard) => {
    if (!/^[0-9a-f]{2}$/.test(shard)) return;
    const dir = path.join(base, shard);
    for (const name of await readdirOrEmpty(dir)) {
      if (top === 'index' && !name.endsWith('.json')) continue;
      const ref = refFromShard(shard, name);
      if (!ref) continue;
      const file = path.join(dir, name);
      try {
        const s = await stat(file);
        out.push({ ref, file, size: s.size, mtimeMs: s.mtimeMs });
      } catch (err) {
        if (!isErrno(err, 'ENOENT')) throw err;
      }
    }
  });
  return out.sort((a, b) => a.ref.localeCompare(b.ref));
}

/** Files under `objects/` that no ref names (written outside the store API). */
export async function strayObjectFiles(root: string): Promise<string[]> {
  const base = path.join(root, 'objects');
  const out: string[] = [];
  for (const shard of await readdirOrEmpty(base)) {
    if (!/^[0-9a-f]{2}$/.test(shard)) {
      out.push(path.join(base, shard));
      continue;
    }
    for (const name of await readdirOrEmpty(path.join(base, shard))) if (!refFromShard(shard, name)) out.push(path.join(base, shard, name));
  }
  return out;
}

/** Fsyncs the shard directories of `refs` under `top`, so deletions or renames in them are durable. */
export async function fsyncShards(root: string, top: 'index' | 'objects', refs: readonly string[]): Promise<void> {
  const dirs = new Set(refs.map((r) => path.dirname(top === 'index' ? indexPath(root, r) : objectPath(root, r))));
  await mapPool([...dirs], IO_CONCURRENCY, (d) => fsyncDir(d));
}

/** A directory's names, or none when it does not exist. */
export async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}
