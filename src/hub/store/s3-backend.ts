import { createHash } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { OutputExistsError } from '../../core/errors.js';
import { StoreError } from '../errors.js';
import { mapPool } from '../pool.js';
import type { Listed, StoreBackend } from './backend.js';
import { IndexEntrySchema, parseIndexEntry, type IndexEntry } from './index-entry.js';
import { assertName, assertRef, isRef, refFromShard, shortRef } from './layout.js';
import { refConflict, type BadRef } from './refs.js';
import { PreconditionFailed, S3Bucket } from './s3.js';

/**
 * The S3 backend (docs/store.md, "S3 backend"): the store's objects, index entries and refs are keys of a bucket
 * under a prefix, laid out as the directory store lays out files:
 *
 * ```
 * <prefix>/objects/ab/cdef…          content, named by its sha256
 * <prefix>/index/ab/cdef….json       one entry per artifact
 * <prefix>/refs/<name>               a named root: `sha256:…\n`
 * <prefix>/touch/objects/ab/cdef…    empty: "a writer just reused this object" (gc's grace period)
 * ```
 *
 * A PUT is atomic (a key shows the old bytes or the new, never a mix; a multipart upload appears when completed), so
 * objects need no temp keys. Refs and entries change by conditional writes (`If-None-Match: *` to create,
 * `If-Match: <etag>` to replace): a writer that lost a race gets HTTP 412 — for a ref a RefConflictError, for an
 * entry (merging parents) a re-read and retry. An object a writer deduplicates against cannot have its modification
 * time touched as a file's can, so the writer puts an empty marker under `touch/` instead; gc counts the newer of
 * the two.
 */
export class S3Backend implements StoreBackend {
  readonly kind = 's3' as const;

  constructor(readonly bucket: S3Bucket) {}

  get location(): string {
    return this.bucket.location.url;
  }

  async readEntry(ref: string): Promise<IndexEntry | undefined> {
    return (await this.readEntryVersion(ref))?.entry;
  }

  async updateEntry(ref: string, change: (current: IndexEntry | undefined) => IndexEntry | undefined): Promise<IndexEntry | undefined> {
    const key = entryKey(ref);
    for (let attempt = 0; attempt < 20; attempt++) {
      const current = await this.readEntryVersion(ref);
      const next = change(current?.entry);
      try {
        if (next === undefined) {
          if (current === undefined) return undefined;
          // Unchanged: write the same bytes again so its time is fresh (gc's grace period); losing the race means
          // another writer just wrote it, which freshened it as well.
          await this.bucket.putBytes(key, current.body, { ifMatch: current.etag }).catch((err: unknown) => {
            if (!(err instanceof PreconditionFailed)) throw err;
          });
          return current.entry;
        }
        IndexEntrySchema.parse(next);
        await this.bucket.putBytes(key, `${JSON.stringify(next, null, 2)}\n`, current === undefined ? { ifNoneMatch: '*' } : { ifMatch: current.etag });
        return next;
      } catch (err) {
        if (!(err instanceof PreconditionFailed)) throw err;
        await sleep(5 + Math.random() * 20 * (attempt + 1));
      }
    }
    throw new StoreError(`cannot update the index entry ${this.bucket.show(key)}: 20 attempts lost to concurrent writers`);
  }

  async listEntries(): Promise<Listed[]> {
    const out: Listed[] = [];
    for (const o of await this.bucket.list('index/')) {
      const ref = shardRef(o.key, 'index/');
      if (ref !== undefined && o.key.endsWith('.json')) out.push({ ref, where: this.bucket.show(o.key), mtimeMs: o.mtimeMs });
    }
    return out.sort((a, b) => a.ref.localeCompare(b.ref));
  }

  async readListed(item: Listed): Promise<IndexEntry> {
    const got = await this.bucket.getBytes(entryKey(item.ref));
    if (got === undefined) throw new StoreError(`${item.where}: the index entry was removed while being read`);
    return parseIndexEntry(got.body.toString('utf8'), item.where);
  }

  async entriesWithPrefix(hex: string): Promise<string[]> {
    const listed = await this.bucket.list(`index/${hex.slice(0, 2)}/${hex.slice(2)}`);
    return listed.flatMap((o) => (o.key.endsWith('.json') ? (shardRef(o.key, 'index/') ?? []) : []));
  }

  async deleteEntries(refs: readonly string[]): Promise<void> {
    await this.bucket.delete(refs.map(entryKey));
  }

  async checkName(name: string): Promise<void> {
    assertName(name);
    const segments = name.split('/');
    for (let i = 1; i < segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      if ((await this.bucket.head(`refs/${prefix}`)) !== undefined) throw new StoreError(`cannot name '${name}': '${prefix}' is already a name in store ${this.location}, so it cannot hold others`);
    }
    if (await this.bucket.any(`refs/${name}/`)) throw new StoreError(`cannot name '${name}': it is a folder of names in store ${this.location} (${name}/…); choose another name`);
  }

  async checkNewName(name: string, options: { force?: boolean }): Promise<void> {
    await this.checkName(name);
    if (options.force) return;
    const got = await this.bucket.getBytes(`refs/${name}`);
    if (got === undefined) return;
    const ref = got.body.toString('utf8').trim();
    throw new OutputExistsError(`'${name}' already names ${isRef(ref) ? shortRef(ref) : 'an artifact'} in store ${this.location} (pass --force to move the name, or choose another name)`);
  }

  async readRef(name: string): Promise<string | undefined> {
    return (await this.readRefVersion(name))?.ref;
  }

  async writeRef(name: string, ref: string, expect?: string | null): Promise<void> {
    await this.checkName(name);
    assertRef(ref);
    if ((await this.readEntry(ref)) === undefined) throw new StoreError(`cannot name '${name}': artifact ${ref} is not in store ${this.location}`);
    const key = `refs/${name}`;
    const got = await this.bucket.getBytes(key);
    const text = got?.body.toString('utf8').trim();
    const current = text !== undefined && isRef(text) ? text : undefined;
    if (current === ref) return;
    if (expect !== undefined && (current ?? null) !== expect) throw refConflict(this.location, name, expect, current);
    try {
      await this.bucket.putBytes(key, `${ref}\n`, got === undefined ? { ifNoneMatch: '*' } : { ifMatch: got.etag });
    } catch (err) {
      if (!(err instanceof PreconditionFailed)) throw err;
      const now = await this.readRef(name).catch(() => undefined);
      // Another writer named the same artifact: nothing was lost.
      if (now === ref) return;
      throw refConflict(this.location, name, expect === undefined ? (current ?? null) : expect, now);
    }
  }

  async deleteRef(name: string): Promise<boolean> {
    assertName(name);
    if ((await this.bucket.head(`refs/${name}`)) === undefined) {
      if (await this.bucket.any(`refs/${name}/`)) throw new StoreError(`cannot remove '${name}': it is a folder of names in store ${this.location}, not a name (see gymflow store ls)`);
      return false;
    }
    await this.bucket.delete([`refs/${name}`]);
    return true;
  }

  async scanRefs(): Promise<{ refs: { name: string; ref: string }[]; bad: BadRef[] }> {
    const listed = await this.bucket.list('refs/');
    const bad: BadRef[] = [];
    const refs: { name: string; ref: string }[] = [];
    await mapPool(listed, 16, async (o) => {
      const name = o.key.slice('refs/'.length);
      try {
        const r = await this.readRefVersion(name);
        if (r !== undefined) refs.push({ name, ref: r.ref });
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        bad.push({ name, path: this.bucket.show(o.key), message: err.message });
      }
    });
    return { refs: refs.sort((a, b) => a.name.localeCompare(b.name)), bad: bad.sort((a, b) => a.name.localeCompare(b.name)) };
  }

  refLocation(name: string): string {
    return this.bucket.show(`refs/${name}`);
  }

  async listObjects(): Promise<(Listed & { size: number })[]> {
    const [objects, touched] = await Promise.all([this.bucket.list('objects/'), this.bucket.list('touch/objects/')]);
    const touchedAt = new Map<string, number>();
    for (const t of touched) {
      const ref = shardRef(t.key, 'touch/objects/');
      if (ref !== undefined) touchedAt.set(ref, t.mtimeMs);
    }
    const out: (Listed & { size: number })[] = [];
    for (const o of objects) {
      const ref = shardRef(o.key, 'objects/');
      if (ref === undefined) continue;
      out.push({ ref, where: this.bucket.show(o.key), size: o.size, mtimeMs: Math.max(o.mtimeMs, touchedAt.get(ref) ?? 0) });
    }
    return out.sort((a, b) => a.ref.localeCompare(b.ref));
  }

  async strayObjects(): Promise<string[]> {
    return (await this.bucket.list('objects/')).filter((o) => shardRef(o.key, 'objects/') === undefined).map((o) => this.bucket.show(o.key));
  }

  async hasObject(ref: string): Promise<boolean> {
    return (await this.bucket.head(objectKey(ref))) !== undefined;
  }

  async freshenObject(ref: string): Promise<boolean> {
    if ((await this.bucket.head(objectKey(ref))) === undefined) return false;
    await this.bucket.putBytes(`touch/${objectKey(ref)}`, '');
    return true;
  }

  async publishObject(ref: string, file: string, size: number): Promise<void> {
    // Content-addressed: two writers uploading the same key upload the same bytes, so no condition is needed.
    await this.bucket.putFile(objectKey(ref), file, size);
  }

  async fetchObject(ref: string, dest: string): Promise<boolean> {
    const got = await this.bucket.getStream(objectKey(ref));
    if (got === undefined) return false;
    const hash = createHash('sha256');
    const fh = await open(dest, 'wx', 0o444);
    try {
      for await (const chunk of got.body) {
        const buf = chunk as Buffer;
        hash.update(buf);
        let off = 0;
        while (off < buf.byteLength) off += (await fh.write(buf, off, buf.byteLength - off)).bytesWritten;
      }
      await fh.sync();
    } catch (err) {
      await fh.close().catch(() => undefined);
      await unlink(dest).catch(() => undefined);
      throw new StoreError(`cannot download ${this.objectLocation(ref)}: ${(err as Error).message}`, { cause: err });
    }
    await fh.close();
    const actual = `sha256:${hash.digest('hex')}`;
    if (actual !== ref) {
      await unlink(dest).catch(() => undefined);
      throw new StoreError(`object ${this.objectLocation(ref)} is corrupt: its bytes hash to ${actual}; run \`gymflow store verify\``);
    }
    return true;
  }

  async hashObject(ref: string): Promise<string> {
    const got = await this.bucket.getStream(objectKey(ref));
    if (got === undefined) throw new StoreError(`object ${this.objectLocation(ref)} disappeared while being verified`);
    const hash = createHash('sha256');
    for await (const chunk of got.body) hash.update(chunk as Buffer);
    return `sha256:${hash.digest('hex')}`;
  }

  async deleteObjects(refs: readonly string[]): Promise<void> {
    await this.bucket.delete(refs.flatMap((r) => [objectKey(r), `touch/${objectKey(r)}`]));
  }

  objectLocation(ref: string): string {
    return this.bucket.show(objectKey(ref));
  }

  async collectExtras(options: { graceMs: number; now: number; dryRun: boolean }): Promise<number> {
    if (options.dryRun) return 0;
    const before = options.now - options.graceMs;
    // Markers older than the grace period protect nothing any more; uploads started before it belong to gone writers.
    const stale = (await this.bucket.list('touch/')).filter((t) => t.mtimeMs < before).map((t) => t.key);
    await this.bucket.delete(stale);
    let aborted = 0;
    try {
      aborted = await this.bucket.abortStaleUploads(before);
    } catch {
      // A server without ListMultipartUploads: its incomplete uploads are its own to expire.
    }
    return stale.length + aborted;
  }

  close(): void {
    this.bucket.destroy();
  }

  private async readEntryVersion(ref: string): Promise<{ entry: IndexEntry; etag: string; body: Buffer } | undefined> {
    if (!isRef(ref)) return undefined;
    const got = await this.bucket.getBytes(entryKey(ref));
    if (got === undefined) return undefined;
    return { entry: parseIndexEntry(got.body.toString('utf8'), this.bucket.show(entryKey(ref))), etag: got.etag, body: got.body };
  }

  private async readRefVersion(name: string): Promise<{ ref: string; etag: string } | undefined> {
    const got = await this.bucket.getBytes(`refs/${assertName(name)}`);
    if (got === undefined) return undefined;
    return { ref: assertRef(got.body.toString('utf8').trim(), `refs/${name}`), etag: got.etag };
  }
}

function objectKey(ref: string): string {
  const hex = assertRef(ref).slice('sha256:'.length);
  return `objects/${hex.slice(0, 2)}/${hex.slice(2)}`;
}

function entryKey(ref: string): string {
  const hex = assertRef(ref).slice('sha256:'.length);
  return `index/${hex.slice(0, 2)}/${hex.slice(2)}.json`;
}

/** The ref of a key `<top>ab/cdef…[.json]`, or `undefined` for a stray key. */
function shardRef(key: string, top: string): string | undefined {
  const m = new RegExp(`^${top.replace(/\//g, '\\/')}([0-9a-f]{2})\\/([^/]+)$`).exec(key);
  return m ? refFromShard(m[1] as string, m[2] as string) : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
