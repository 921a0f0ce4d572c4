import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir, pathExists } from '../../core/fs.js';
import { StoreError } from '../errors.js';
import type { IndexEntry } from './index-entry.js';
import type { ArtifactStore } from './store.js';
import { readTrajectories } from './trajectory-set.js';
import { checkoutTree, readTree } from './tree.js';

/** What {@link checkoutArtifact} wrote. */
export interface CheckoutResult {
  entry: IndexEntry;
  /** Files written: a tree's members, else 1. */
  files: number;
  bytes: number;
  /** Trajectories written, for a trajectory set. */
  trajectories?: number;
}

/** Bytes of JSONL gathered before each write of a trajectory set. */
const WRITE_CHUNK = 1 << 20;

/**
 * Writes an artifact out of the store to `dest`, which must not exist, in the form a user works with:
 * - a file tree (a trainer checkpoint, an ONNX policy, an exported dataset): the directory `dest`
 *   ({@link checkoutTree});
 * - a trajectory set: the file `dest`, one full trajectory per line (the set's manifest only points at its
 *   members), the JSONL that `gymflow record validate` and `reward score` read;
 * - anything else: the file `dest`, byte for byte.
 *
 * Either appears complete or not at all: it is written under a sibling temp name and renamed into place.
 *
 * @throws StoreError when `dest` exists, the artifact is not in the store or was pruned, or an object is missing
 *   or truncated.
 */
export async function checkoutArtifact(store: ArtifactStore, ref: string, dest: string): Promise<CheckoutResult> {
  const entry = await store.statForRead(ref);
  if (await pathExists(dest)) throw new StoreError(`${dest} already exists: checkout writes a new file or directory (remove it or choose another path)`);
  if (entry.format === 'tree') {
    const manifest = await readTree(store, ref);
    await checkoutTree(store, ref, dest);
    return { entry, files: manifest.files.length, bytes: manifest.files.reduce((sum, f) => sum + f.size, 0) };
  }
  const parent = path.dirname(path.resolve(dest));
  const tmp = `${dest}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  await mkdir(parent, { recursive: true });
  try {
    const result: CheckoutResult =
      entry.format === 'trajectory-set' ? { entry, files: 1, ...(await writeTrajectorySet(store, ref, tmp)) } : { entry, files: 1, bytes: await store.copyObjectTo(ref, tmp, entry.size) };
    await rename(tmp, dest);
    await fsyncDir(parent);
    return result;
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

async function writeTrajectorySet(store: ArtifactStore, ref: string, file: string): Promise<{ bytes: number; trajectories: number }> {
  const fh = await open(file, 'wx', 0o644);
  let bytes = 0;
  let trajectories = 0;
  try {
    let chunk = '';
    const flush = async (): Promise<void> => {
      const buf = Buffer.from(chunk, 'utf8');
      await fh.write(buf);
      bytes += buf.byteLength;
      chunk = '';
    };
    // Validated as they are joined: a damaged member fails the checkout naming `ref:line $.path`.
    for await (const t of readTrajectories(store, ref)) {
      chunk += `${JSON.stringify(t)}\n`;
      trajectories++;
      if (chunk.length >= WRITE_CHUNK) await flush();
    }
    await flush();
    await fh.sync();
  } finally {
    await fh.close();
  }
  return { bytes, trajectories };
}

