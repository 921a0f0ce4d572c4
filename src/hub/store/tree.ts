import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir, isErrno } from '../../core/fs.js';
import { StoreError } from '../errors.js';
import { mapPool } from '../pool.js';
import type { IndexEntry } from './index-entry.js';
import { parseTreeManifest, TREE_FORMAT, type TreeManifest } from './manifests.js';
import type { ArtifactStore, PutOptions } from './store.js';

/**
 * File trees in the store: an exported dataset directory (Hugging Face layout) stored as one object
 * per file plus a JSON manifest `{format: "gymflow.tree", version: 1, files: [{path, object, size}]}`
 * sorted by path. The manifest is the artifact; its files are members that gc keeps with it.
 *
 * Trees hold trainer checkpoints and ONNX policies (many GB), so neither direction reads a file into
 * memory: `putTree` streams each file through sha256 into the store, `checkoutTree` copies objects
 * with `copyFile` (a reflink or an in-kernel copy).
 */

/**
 * Files copied at once by {@link checkoutTree}; the copies run in the kernel, so this bounds open
 * files and disk contention, not memory.
 */
const CHECKOUT_CONCURRENCY = 4;

/**
 * Stores every regular file under `dir` (recursively; symlinks and other special files are refused)
 * and returns the tree artifact's entry. Files are streamed a few at a time
 * ({@link ArtifactStore.putObjectFiles}); identical files share one object. Every member is durable
 * before the manifest is published.
 *
 * @example
 * ```ts
 * const ckpt = await putTree(store, 'runs/sft/final', { kind: 'checkpoint', name: 'exp/iter-1/checkpoint' });
 * await checkoutTree(store, ckpt.ref, '/scratch/ckpt'); // appears complete or not at all
 * ```
 */
export async function putTree(store: ArtifactStore, dir: string, options: Omit<PutOptions, 'format'>): Promise<IndexEntry> {
  const files = await listFiles(dir);
  const objects = await store.putObjectFiles(files.map((rel) => path.join(dir, ...rel.split('/'))));
  const manifest: TreeManifest = {
    format: TREE_FORMAT,
    version: 1,
    files: files.map((rel, i) => {
      const o = objects[i] as { ref: string; size: number };
      return { path: rel, object: o.ref, size: o.size };
    }),
  };
  const bytes = manifest.files.reduce((a, f) => a + f.size, 0);
  return store.putJson(manifest, { ...options, format: 'tree', meta: { ...options.meta, files: files.length, bytes } });
}

/** The manifest of a tree artifact, to read its files (so not of a pruned one). */
export async function readTree(store: ArtifactStore, ref: string): Promise<TreeManifest> {
  const entry = await store.statForRead(ref);
  if (entry.format !== 'tree') throw new StoreError(`${ref} is a ${entry.format} artifact (${entry.kind}), not a file tree`);
  return parseTreeManifest(await store.getText(ref), ref);
}

/**
 * Writes a tree artifact's files under `dest` (which must not exist), via a sibling temp directory
 * renamed into place, so `dest` appears complete or not at all. Each object is copied with `copyFile`
 * (never read into memory) and checked against the manifest's size; files and directories are fsynced
 * before the rename, so a `dest` that exists after a crash is complete.
 */
export async function checkoutTree(store: ArtifactStore, ref: string, dest: string): Promise<void> {
  const manifest = await readTree(store, ref);
  // Unique per call: concurrent checkouts of one dest (two activities of a worker) must not share it.
  const tmp = `${dest}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  const root = path.resolve(tmp);
  // Every path is checked before anything is written.
  const targets = manifest.files.map((f, i) => {
    const target = path.resolve(root, ...f.path.split('/'));
    if (!target.startsWith(root + path.sep)) throw new StoreError(`${ref} $.files[${i}].path: '${f.path}' escapes the tree`);
    return target;
  });
  await mkdir(path.dirname(root), { recursive: true });
  await mkdir(tmp);
  try {
    const dirs = new Set<string>([root]);
    for (const t of targets) for (let d = path.dirname(t); d !== root && !dirs.has(d); d = path.dirname(d)) dirs.add(d);
    // Parents before children (shorter paths first), so each mkdir finds its parent.
    for (const d of [...dirs].sort((a, b) => a.length - b.length)) if (d !== root) await mkdir(d, { recursive: true });
    await mapPool(manifest.files, CHECKOUT_CONCURRENCY, (f, i) => store.copyObjectTo(f.object, targets[i] as string, f.size));
    for (const d of dirs) await fsyncDir(d);
    await rename(tmp, dest);
    await fsyncDir(path.dirname(path.resolve(dest)));
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (abs: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch (err) {
      if (isErrno(err, 'ENOENT')) throw new StoreError(`directory ${dir} does not exist`);
      throw err;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(path.join(abs, e.name), r);
      else if (e.isFile()) out.push(r);
      else throw new StoreError(`${path.join(abs, e.name)}: only regular files and directories can be stored in a tree`);
    }
  };
  await walk(dir, '');
  return out.sort();
}
