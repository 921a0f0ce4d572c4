import { readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, isErrno, pathExists, touch } from '../../core/fs.js';
import { mapPool } from '../pool.js';
import type { Listed, StoreBackend } from './backend.js';
import { parseIndexEntry, readIndexEntry, writeIndexEntry, type IndexEntry } from './index-entry.js';
import { indexPath, objectPath, refFromShard, refPath } from './layout.js';
import { checkNewRefName, checkRefName, deleteRef, readRef, scanRefs, writeRef, type BadRef } from './refs.js';
import { fsyncShards, IO_CONCURRENCY, readdirOrEmpty, shardFiles, strayObjectFiles } from './shards.js';
import { hashFile } from './stream.js';

/**
 * The directory backend (docs/store.md): objects, index entries and refs are files under the store root, published
 * by temp file → fsync → rename (atomic.ts). Several hosts share it through a network filesystem that keeps rename
 * atomic; `s3://` stores (s3-backend.ts) need none.
 */
export class DirBackend implements StoreBackend {
  readonly kind = 'directory' as const;

  constructor(readonly root: string) {}

  get location(): string {
    return this.root;
  }

  readEntry(ref: string): Promise<IndexEntry | undefined> {
    return readIndexEntry(this.root, ref);
  }

  async updateEntry(ref: string, change: (current: IndexEntry | undefined) => IndexEntry | undefined): Promise<IndexEntry | undefined> {
    const current = await readIndexEntry(this.root, ref);
    const next = change(current);
    if (next === undefined) {
      if (current !== undefined) await touch(indexPath(this.root, ref));
      return current;
    }
    await ensureDir(path.dirname(indexPath(this.root, ref)));
    await writeIndexEntry(this.root, next);
    return next;
  }

  async listEntries(): Promise<Listed[]> {
    return (await shardFiles(this.root, 'index')).map((f) => ({ ref: f.ref, where: f.file, mtimeMs: f.mtimeMs }));
  }

  async readListed(item: Listed): Promise<IndexEntry> {
    return parseIndexEntry(await readFile(item.where, 'utf8'), item.where);
  }

  async entriesWithPrefix(hex: string): Promise<string[]> {
    const shard = hex.slice(0, 2);
    const rest = hex.slice(2);
    const names = await readdirOrEmpty(path.join(this.root, 'index', shard));
    return names.filter((n) => n.startsWith(rest) && n.endsWith('.json')).flatMap((n) => refFromShard(shard, n) ?? []);
  }

  async deleteEntries(refs: readonly string[]): Promise<void> {
    for (const ref of refs) await unlink(indexPath(this.root, ref)).catch(ignoreEnoent);
    if (refs.length > 0) await fsyncShards(this.root, 'index', refs);
  }

  checkName(name: string): Promise<void> {
    return checkRefName(this.root, name);
  }

  checkNewName(name: string, options: { force?: boolean }): Promise<void> {
    return checkNewRefName(this.root, name, options);
  }

  readRef(name: string): Promise<string | undefined> {
    return readRef(this.root, name);
  }

  writeRef(name: string, ref: string, expect?: string | null): Promise<void> {
    return writeRef(this.root, name, ref, expect);
  }

  deleteRef(name: string): Promise<boolean> {
    return deleteRef(this.root, name);
  }

  scanRefs(): Promise<{ refs: { name: string; ref: string }[]; bad: BadRef[] }> {
    return scanRefs(this.root);
  }

  refLocation(name: string): string {
    return refPath(this.root, name);
  }

  async listObjects(): Promise<(Listed & { size: number })[]> {
    return (await shardFiles(this.root, 'objects')).map((f) => ({ ref: f.ref, where: f.file, mtimeMs: f.mtimeMs, size: f.size }));
  }

  strayObjects(): Promise<string[]> {
    return strayObjectFiles(this.root);
  }

  hasObject(ref: string): Promise<boolean> {
    return pathExists(objectPath(this.root, ref));
  }

  freshenObject(ref: string): Promise<boolean> {
    return touch(objectPath(this.root, ref));
  }

  async publishObject(): Promise<void> {
    // The local file is the object: renamed onto its address by the store.
  }

  async fetchObject(): Promise<boolean> {
    return false;
  }

  async hashObject(ref: string): Promise<string> {
    return (await hashFile(objectPath(this.root, ref))).ref;
  }

  async deleteObjects(refs: readonly string[]): Promise<void> {
    await mapPool(refs, IO_CONCURRENCY, (ref) => unlink(objectPath(this.root, ref)).catch(ignoreEnoent));
    if (refs.length > 0) await fsyncShards(this.root, 'objects', refs);
  }

  objectLocation(ref: string): string {
    return objectPath(this.root, ref);
  }

  async collectExtras(): Promise<number> {
    return 0;
  }

  close(): void {}
}

function ignoreEnoent(err: unknown): void {
  if (!isErrno(err, 'ENOENT')) throw err;
}
