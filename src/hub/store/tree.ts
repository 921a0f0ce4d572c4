import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { StoreError } from '../errors.js';
import { mapPool } from '../pool.js';
import { isErrno } from './atomic.js';
import { parseTreeManifest, TREE_FORMAT, type TreeManifest } from './manifests.js';
import type { ArtifactStore, IndexEntry, PutOptions } from './store.js';

/**
 * File trees in the store: an exported dataset directory (Hugging Face layout) stored as one object
 * per file plus a JSON manifest `{format: "gymflow.tree", version: 1, files: [{path, object, size}]}`
 * sorted by path. The manifest is the artifact; its files are members that gc keeps with it.
 */

/**
 * Stores every regular file under `dir` (recursively; symlinks and other special files are refused)
 * and returns the tree artifact's entry.
 */
export async function putTree(store: ArtifactStore, dir: string, options: Omit<PutOptions, 'format'>): Promise<IndexEntry> {
  const files = await listFiles(dir);
  const bytes = await mapPool(files, 16, (rel) => readFile(path.join(dir, rel)));
  const refs = await store.putObjects(bytes);
  const manifest: TreeManifest = {
    format: TREE_FORMAT,
    version: 1,
    files: files.map((rel, i) => ({ path: rel, object: refs[i] as string, size: (bytes[i] as Buffer).byteLength })),
  };
  return store.putJson(manifest, { ...options, format: 'tree', meta: { ...options.meta, files: files.length, bytes: bytes.reduce((a, b) => a + b.byteLength, 0) } });
}

/** The manifest of a tree artifact. */
export async function readTree(store: ArtifactStore, ref: string): Promise<TreeManifest> {
  const entry = await store.stat(ref);
  if (entry.format !== 'tree') throw new StoreError(`${ref} is a ${entry.format} artifact (${entry.kind}), not a file tree`);
  return parseTreeManifest(await store.getText(ref), ref);
}

/**
 * Writes a tree artifact's files under `dest` (which must not exist), via a sibling temp directory
 * renamed into place, so `dest` appears complete or not at all.
 */
export async function checkoutTree(store: ArtifactStore, ref: string, dest: string): Promise<void> {
  const manifest = await readTree(store, ref);
  const tmp = `${dest}.tmp-${process.pid}-${Date.now()}`;
  await mkdir(tmp, { recursive: true });
  try {
    for (const f of manifest.files) {
      const target = path.join(tmp, ...f.path.split('/'));
      if (!path.resolve(target).startsWith(path.resolve(tmp) + path.sep)) throw new StoreError(`${ref}: file path '${f.path}' escapes the tree`);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, await store.get(f.object));
    }
    await rename(tmp, dest);
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
