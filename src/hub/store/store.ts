import { createHash } from 'node:crypto';
import { constants as fsConstants, type ReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { chmod, copyFile, open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { canonicalJson, sha256Ref } from '../../core/canonical.js';
import { defined } from '../../core/defined.js';
import { ensureDir, fsyncDir, isErrno, moveInto, pathExists } from '../../core/fs.js';
import { StoreError } from '../errors.js';
import { mapPool } from '../pool.js';
import { cleanTempFiles, tempPath, TMP_DIR, writeFileAtomic, writeTemp } from './atomic.js';
import type { StoreBackend } from './backend.js';
import { DirBackend } from './dir-backend.js';
import { ARTIFACT_KINDS, IndexEntrySchema, type ArtifactFormat, type IndexEntry } from './index-entry.js';
import { assertName, isRef, isS3Url, objectPath, resolveStoreRoot } from './layout.js';
import { lineageOf, type LineageNode } from './lineage.js';
import { collectGarbage, pruneArtifact, verifyStore, type GcOptions, type GcReport, type VerifyReport } from './maintenance.js';
import type { BadRef } from './refs.js';
import { IO_CONCURRENCY } from './shards.js';
import { hashCopy, type StreamedObject } from './stream.js';

/**
 * The content-addressed artifact store (DESIGN.md §7, docs/store.md).
 *
 * - **Objects** are immutable files named by the sha256 of their bytes (`objects/ab/cdef…`). JSON is
 *   canonicalised ({@link canonicalJson}) before hashing, so equal values share one object.
 * - **Index**: one small JSON file per artifact (`index/ab/cdef….json`, index-entry.ts).
 * - **Refs**: named roots (`refs/<name>` → `sha256:…`, refs.ts). `gc` keeps what the roots reach through
 *   parents and manifest members, and deletes the rest (maintenance.ts); `lineage` walks parents (lineage.ts).
 *
 * This file writes and reads objects and index entries; {@link ArtifactStore} is the one handle callers use,
 * and delegates refs, lineage and maintenance to their files.
 *
 * Publication order makes every crash safe: object (fsynced, renamed, directory fsynced) → index entry
 * (same) → ref (same). A reader that finds a ref finds its index entry; an index entry, its object; a
 * manifest, its members. A crash before the last rename leaves an unreferenced temp file or object,
 * which the next open (temp files) or `gc` (objects) removes.
 */

/** Options of every `put`. */
export interface PutOptions {
  /** What the artifact is (`trajectories`, `dataset`, …). */
  kind: string;
  /** Refs of the artifacts it was made from. */
  parents?: readonly string[];
  /** Also point `refs/<name>` at it (a gc root). */
  name?: string;
  /**
   * With `name`: what the name must name before this put (`null`: nothing), else the put fails with a
   * RefConflictError (the artifact is stored, unnamed). Without it the name moves, conditionally on what it named
   * when read (see {@link ArtifactStore.setRef}).
   */
  expectRef?: string | null;
  meta?: Record<string, unknown>;
  /** Default `bytes` (`json` for {@link ArtifactStore.putJson}). */
  format?: ArtifactFormat;
}

/** Options of {@link ArtifactStore.open}. */
export interface OpenStoreOptions {
  /**
   * Store root: a directory, or `s3://bucket/prefix` (docs/store.md, "S3 backend"); default `$GYMFLOW_STORE`, else
   * `.gymflow/store`.
   */
  root?: string;
  /**
   * For an `s3://` store: the local directory that caches its objects by content hash (and holds temp files and
   * journals); default `$GYMFLOW_STORE_CACHE`, else `.gymflow/store-cache`. Any number of stores may share one.
   */
  cacheDir?: string;
  /** Create the store (a bucket: when it does not exist) rather than fail; default true. */
  create?: boolean;
  /** Where an `s3://` store's endpoint and credentials are read from (s3.ts `s3ClientConfig`); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Age after which any temp file counts as abandoned (default 1 h). */
  staleTempMs?: number;
}

/** A streaming write of one object; see {@link ArtifactStore.createWriter}. */
export interface ArtifactWriter {
  /** Appends bytes (strings as UTF-8). */
  write(chunk: string | Uint8Array): Promise<void>;
  /** Bytes written so far. */
  readonly size: number;
  /** Publishes the object and its index entry (and ref name); returns the entry. */
  commit(options: PutOptions): Promise<IndexEntry>;
  /** Publishes the object only (no index entry): for members of a manifest. Returns its ref. */
  commitObject(): Promise<string>;
  /** Drops the temp file. Safe to call after commit. */
  abort(): Promise<void>;
}

const KIND_PATTERN = /^[a-z][a-z0-9-]*$/;
/**
 * Files streamed at once by {@link ArtifactStore.putObjectFiles}: each holds one chunk buffer, and
 * large files are disk-bound, so a few in flight keep the disk busy without multiplying memory.
 */
const FILE_IO_CONCURRENCY = 4;

/**
 * An opened store. Opening creates the directories and removes temp files of dead writers.
 *
 * @example
 * ```ts
 * const store = await ArtifactStore.open({ root: '.gymflow/store' });
 * const tasks = await store.putJson({ tasks: ['t1', 't2'] }, { kind: 'task-set' });
 * const data = await store.putBytes(jsonl, { kind: 'dataset', parents: [tasks.ref], name: 'sft/latest' });
 * for (const node of (await store.lineage(data.ref)).parents) console.log(node.entry?.kind);
 * ```
 */
export class ArtifactStore {
  /**
   * The absolute local directory of the store: the store itself (directory backend), or the host's cache of an
   * `s3://` store's objects. Temp files and episode journals live here in both cases.
   */
  readonly root: string;
  /** Where the index, refs and authoritative objects live (backend.ts). */
  readonly backend: StoreBackend;
  private readonly staleTempMs: number;

  private constructor(root: string, backend: StoreBackend, staleTempMs: number) {
    this.root = root;
    this.backend = backend;
    this.staleTempMs = staleTempMs;
  }

  /** The store as users name it: its root directory, or `s3://bucket/prefix`. */
  get location(): string {
    return this.backend.location;
  }

  /**
   * Opens (creating if needed) the store at `options.root` / `$GYMFLOW_STORE` / `.gymflow/store`: a directory, or
   * an `s3://bucket/prefix` with its endpoint and credentials from the environment (s3.ts, docs/store.md).
   */
  static async open(options: OpenStoreOptions = {}): Promise<ArtifactStore> {
    const staleTempMs = options.staleTempMs ?? 3_600_000;
    const where = resolveStoreRoot(options.root);
    let store: ArtifactStore;
    if (isS3Url(where)) {
      // The AWS SDK loads only here: commands on a directory store never pay for it.
      const { parseS3Url, S3Bucket, s3ClientConfig } = await import('./s3.js');
      const { S3Backend } = await import('./s3-backend.js');
      const bucket = new S3Bucket(parseS3Url(where), s3ClientConfig(options.env));
      try {
        await bucket.ensureBucket(options.create ?? true);
      } catch (err) {
        bucket.destroy();
        throw err;
      }
      store = new ArtifactStore(resolveCacheDir(options.cacheDir), new S3Backend(bucket), staleTempMs);
    } else {
      store = new ArtifactStore(where, new DirBackend(where), staleTempMs);
    }
    try {
      for (const dir of ['objects', 'index', 'refs', TMP_DIR]) {
        if (store.backend.kind === 's3' && (dir === 'index' || dir === 'refs')) continue;
        await ensureDir(path.join(store.root, dir));
      }
    } catch (err) {
      store.close();
      const e = err as NodeJS.ErrnoException;
      const why = e.code === 'ENOTDIR' || e.code === 'EEXIST' ? 'it, or a folder on its path, is a file' : e.code === 'EACCES' ? 'permission denied' : e.message;
      throw new StoreError(`cannot open the artifact store ${store.backend.kind === 's3' ? `cache ${store.root} of ${store.location}` : store.root}: ${why}`);
    }
    await cleanTempFiles(store.root, { staleMs: store.staleTempMs });
    return store;
  }

  /** Releases the backend's connections (an `s3://` store's HTTP agents); the store is not used afterwards. */
  close(): void {
    this.backend.close();
  }

  // ---------------------------------------------------------------------------------------------
  // Writing

  /** Stores raw bytes (hashed as they are). */
  async putBytes(data: string | Uint8Array, options: PutOptions): Promise<IndexEntry> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.checkPut(options);
    const ref = await this.putObject(bytes);
    return this.record(ref, bytes.byteLength, { format: 'bytes', ...options });
  }

  /** Stores a JSON value, canonicalised first so equal values get one ref. */
  async putJson(value: unknown, options: PutOptions): Promise<IndexEntry> {
    return this.putBytes(canonicalJson(value), { format: 'json', ...options });
  }

  /**
   * Stores a file's bytes, streamed through sha256 into the store (for checkpoints and other large
   * artifacts): memory stays at one `STREAM_CHUNK_BYTES` buffer (stream.ts) whatever the file's size.
   */
  async putFile(file: string, options: PutOptions): Promise<IndexEntry> {
    this.checkPut(options);
    const [obj] = await this.putObjectFiles([file]);
    const { ref, size } = obj as StreamedObject;
    return this.record(ref, size, { format: 'bytes', ...options });
  }

  /**
   * Stores files as objects without index entries (members of a tree manifest), streaming each one
   * through sha256 while copying it into the store's temp directory, then renaming the copy onto its
   * content address unless that object already exists (dedup: the copy is dropped and the existing
   * object touched for gc's grace period). At most `concurrency` files are in flight, each holding one
   * `STREAM_CHUNK_BYTES` buffer, so memory does not grow with file size. The objects are durable
   * (files and shard directories fsynced) when this returns. Returns each file's ref and size, in order.
   *
   * The size is what was actually read: a file that changes while it is stored gets the object of the
   * bytes read, never a torn one.
   */
  async putObjectFiles(files: readonly string[], options: { concurrency?: number } = {}): Promise<StreamedObject[]> {
    const dirs = new Set<string>();
    const published: StreamedObject[] = [];
    const concurrency = options.concurrency ?? FILE_IO_CONCURRENCY;
    const out = await mapPool(files, concurrency, async (file) => {
      const r = await this.putFileObject(file);
      if (r.published) {
        dirs.add(r.published);
        published.push({ ref: r.ref, size: r.size });
      }
      return { ref: r.ref, size: r.size };
    });
    await mapPool([...dirs], IO_CONCURRENCY, (d) => fsyncDir(d));
    await mapPool(published, concurrency, (o) => this.backend.publishObject(o.ref, objectPath(this.root, o.ref), o.size));
    return out;
  }

  /**
   * Starts a streaming write: chunks go to a temp file while their hash is computed; `commit` renames
   * it onto its content address. Nothing is visible in the store until `commit` returns; a writer that
   * dies leaves only a temp file, which the next open or gc removes.
   */
  async createWriter(): Promise<ArtifactWriter> {
    return StreamWriter.start(this);
  }

  /**
   * Writes objects without index entries (manifest members), skipping those already present. The
   * objects are durable (files and directories fsynced) when this returns. Returns their refs in order.
   */
  async putObjects(items: readonly (string | Uint8Array)[]): Promise<string[]> {
    const bytes = items.map((d) => (typeof d === 'string' ? Buffer.from(d, 'utf8') : d));
    const refs = bytes.map((b) => sha256Ref(b));
    const seen = new Set<string>();
    const todo: { ref: string; data: Uint8Array }[] = [];
    refs.forEach((ref, i) => {
      if (seen.has(ref)) return;
      seen.add(ref);
      todo.push({ ref, data: bytes[i] as Uint8Array });
    });
    const dirs = new Set<string>();
    const published: { ref: string; size: number }[] = [];
    await mapPool(todo, IO_CONCURRENCY, async ({ ref, data }) => {
      if (await this.backend.freshenObject(ref)) return;
      const dest = objectPath(this.root, ref);
      published.push({ ref, size: data.byteLength });
      // An s3:// store's cache may hold it already (the bucket lost it to a gc): upload that copy.
      if (this.backend.kind === 's3' && (await pathExists(dest))) return;
      const tmp = await writeTemp(this.root, data);
      await moveInto(tmp, dest);
      dirs.add(path.dirname(dest));
    });
    await mapPool([...dirs], IO_CONCURRENCY, (d) => fsyncDir(d));
    await mapPool(published, IO_CONCURRENCY, (o) => this.backend.publishObject(o.ref, objectPath(this.root, o.ref), o.size));
    return refs;
  }

  /**
   * Throws a {@link StoreError} unless `name` can name an artifact: a valid name that is not a folder of
   * other names (`runs` while `runs/expert` exists) and has no name as a folder (`runs/expert/x` while
   * `runs/expert` exists). Commands that run for a while check this before they start.
   */
  async checkName(name: string): Promise<void> {
    await this.backend.checkName(name);
  }

  /**
   * {@link checkName} for a command's output (`collect -o NAME`, `eval --save NAME`), which also refuses a
   * name that already names an artifact unless `force` (`--force` moves the name; the artifact it named stays
   * in the store, unnamed, until a `gc`). Checked before the command's work starts.
   *
   * @throws OutputExistsError naming `name`, the ref it names and `--force`.
   */
  async checkNewName(name: string, options: { force?: boolean } = {}): Promise<void> {
    await this.backend.checkNewName(name, options);
  }

  /**
   * Points `refs/<name>` at an artifact of this store (atomically replacing an earlier target) with a conditional
   * write, so that two writers cannot silently overwrite each other (docs/store.md, "Refs"): with `expect`, the name
   * must name `expect` (`null`: nothing) or the call fails with a RefConflictError; without it, the write is
   * conditional on what the name held when this call read it, so a concurrent update of the same name makes one of
   * the two fail. The name already naming `ref` always succeeds (a retried step).
   */
  async setRef(name: string, ref: string, options: { expect?: string | null } = {}): Promise<void> {
    await this.backend.writeRef(name, ref, options.expect);
  }

  /** Removes a ref name; returns whether it existed. Its artifacts become collectable by `gc`. */
  async deleteRef(name: string): Promise<boolean> {
    return this.backend.deleteRef(name);
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /**
   * The bytes of an object, read whole: for small objects (JSON, manifests). Large ones (checkpoint
   * files) go through {@link ArtifactStore.openObjectStream} or {@link ArtifactStore.copyObjectTo}.
   */
  async get(ref: string): Promise<Buffer> {
    try {
      return await readFile(await this.localObjectFile(ref));
    } catch (err) {
      if (isErrno(err, 'ENOENT')) throw new StoreError(`object ${ref} is not in store ${this.location}`);
      throw err;
    }
  }

  /**
   * The local path of an object, for tools that read the file themselves (the trainer reads datasets this way): the
   * object itself in a directory store; in an `s3://` store its copy in this host's cache, downloaded (and checked
   * against its hash) when missing. Do not write to it.
   *
   * @throws StoreError when the object is in neither.
   */
  async localObjectFile(ref: string): Promise<string> {
    const file = objectPath(this.root, ref);
    if (this.backend.kind === 'directory' || (await pathExists(file))) return file;
    const tmp = tempPath(this.root);
    if (!(await this.backend.fetchObject(ref, tmp))) throw new StoreError(`object ${ref} is not in store ${this.location}`);
    await ensureDir(path.dirname(file));
    await moveInto(tmp, file);
    return file;
  }

  /**
   * A read stream over an object's bytes (bounded memory, for large objects); the store error for a
   * missing object is thrown here rather than emitted later by the stream.
   */
  async openObjectStream(ref: string, options: { highWaterMark?: number } = {}): Promise<ReadStream> {
    let fh: FileHandle;
    try {
      fh = await open(await this.localObjectFile(ref), 'r');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) throw new StoreError(`object ${ref} is not in store ${this.location}`);
      throw err;
    }
    return fh.createReadStream({ highWaterMark: options.highWaterMark ?? 1024 * 1024, autoClose: true });
  }

  /**
   * Copies an object to a new file `dest` (which must not exist) without reading it into memory:
   * `copyFile` clones it where the filesystem can (btrfs, XFS reflinks) and otherwise copies in the
   * kernel. The copy is writable (0644, unlike the read-only object), fsynced, and checked to have
   * `expectedSize` bytes when given. Returns its size.
   */
  async copyObjectTo(ref: string, dest: string, expectedSize?: number): Promise<number> {
    let src: string;
    try {
      src = await this.localObjectFile(ref);
    } catch (err) {
      if (err instanceof StoreError) throw new StoreError(`${err.message} (copying to ${dest})`);
      throw err;
    }
    try {
      await copyFile(src, dest, fsConstants.COPYFILE_EXCL | fsConstants.COPYFILE_FICLONE);
    } catch (err) {
      if (isErrno(err, 'ENOENT') && !(await pathExists(src))) throw new StoreError(`object ${ref} is not in store ${this.location} (copying to ${dest})`);
      throw err;
    }
    // copyFile gives the copy the object's read-only mode; a checkout is the caller's to change.
    await chmod(dest, 0o644);
    const fh = await open(dest, 'r');
    try {
      const { size } = await fh.stat();
      if (expectedSize !== undefined && size !== expectedSize) {
        throw new StoreError(`object ${ref} in store ${this.location} has ${size} bytes, expected ${expectedSize} (copying to ${dest}); run \`gymflow store verify\``);
      }
      await fh.sync();
      return size;
    } finally {
      await fh.close();
    }
  }

  /** An object's bytes as UTF-8 text. */
  async getText(ref: string): Promise<string> {
    return (await this.get(ref)).toString('utf8');
  }

  /** An object parsed as JSON (not validated: pass it through a schema at the edge). */
  async getJson(ref: string): Promise<unknown> {
    const text = await this.getText(ref);
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new StoreError(`object ${ref} in store ${this.location} is not JSON: ${(err as Error).message}`);
    }
  }

  /**
   * The path of an object of a directory store (for streaming reads; do not write to it).
   *
   * @throws StoreError for an `s3://` store, whose objects may not be on this host yet: use {@link localObjectFile}.
   */
  objectFile(ref: string): string {
    if (this.backend.kind !== 'directory') throw new StoreError(`objectFile(${ref}): store ${this.location} is not a directory; use localObjectFile, which downloads the object into this host's cache`);
    return objectPath(this.root, ref);
  }

  /** Whether an artifact (an index entry) exists. */
  async has(ref: string): Promise<boolean> {
    return (await this.tryStat(ref)) !== undefined;
  }

  /** Whether an object exists (artifact or manifest member). */
  async hasObject(ref: string): Promise<boolean> {
    return this.backend.hasObject(ref);
  }

  /** An artifact's index entry. */
  async stat(ref: string): Promise<IndexEntry> {
    const entry = await this.tryStat(ref);
    if (!entry) throw new StoreError(`artifact ${ref} is not in store ${this.location}`);
    return entry;
  }

  /**
   * An artifact's index entry, for reading its content.
   *
   * @throws StoreError when the artifact is not in the store or was pruned.
   */
  async statForRead(ref: string): Promise<IndexEntry> {
    const entry = await this.stat(ref);
    if (entry.prunedAt !== undefined) {
      throw new StoreError(
        `artifact ${ref}${entry.name === undefined ? '' : ` (${entry.name})`} was pruned at ${entry.prunedAt}: its index entry and lineage remain, its content does not (store it again to restore it)`,
      );
    }
    return entry;
  }

  /** An artifact's index entry, or `undefined`. */
  async tryStat(ref: string): Promise<IndexEntry | undefined> {
    return this.backend.readEntry(ref);
  }

  /** Every artifact's index entry, newest first (optionally of one kind). */
  async list(options: { kind?: string } = {}): Promise<IndexEntry[]> {
    const listed = await this.backend.listEntries();
    const entries = await mapPool(listed, IO_CONCURRENCY, (l) => this.backend.readListed(l));
    return entries
      .filter((e) => options.kind === undefined || e.kind === options.kind)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.ref.localeCompare(b.ref));
  }

  /** The target of `refs/<name>`, or `undefined`. */
  async getRef(name: string): Promise<string | undefined> {
    return this.backend.readRef(name);
  }

  /**
   * Every ref name and its target, sorted by name. A ref file that holds no ref (edited by hand, cut short) is
   * left out, so one bad file does not hide the rest; {@link scanRefs} lists them, and `gc` refuses to run
   * while there is one (it could not know what that name keeps alive).
   */
  async listRefs(): Promise<{ name: string; ref: string }[]> {
    return (await this.scanRefs()).refs;
  }

  /** {@link listRefs}, and the ref files that hold no ref, with why. */
  async scanRefs(): Promise<{ refs: { name: string; ref: string }[]; bad: BadRef[] }> {
    return this.backend.scanRefs();
  }

  /**
   * Resolves what a user typed to a full ref: a full `sha256:…` ref, a unique prefix of one
   * (`sha256:3fa2c1`, at least 6 hex digits), or a ref name.
   */
  async resolve(spec: string): Promise<string> {
    const where = this.location;
    if (isRef(spec)) {
      if ((await this.backend.readEntry(spec)) !== undefined) return spec;
      throw new StoreError(`artifact ${spec} is not in store ${where}`);
    }
    const prefix = /^sha256:([0-9a-f]{6,63})$/.exec(spec)?.[1];
    if (prefix !== undefined) {
      const hits = await this.backend.entriesWithPrefix(prefix);
      if (hits.length === 1 && hits[0]) return hits[0];
      if (hits.length > 1) throw new StoreError(`ref prefix '${spec}' is ambiguous in store ${where}: ${hits.length} artifacts match`);
      throw new StoreError(`no artifact with ref prefix '${spec}' in store ${where}`);
    }
    if (/^sha256:[0-9a-f]{0,5}$/.test(spec)) throw new StoreError(`ref prefix '${spec}' is too short: give at least 6 hex digits after sha256:`);
    if (!/^[A-Za-z0-9]/.test(spec) || spec.includes(':')) {
      throw new StoreError(`'${spec}' is neither a ref (sha256:…) nor a ref name`);
    }
    const target = await this.backend.readRef(spec);
    if (target === undefined) throw new StoreError(`no ref named '${spec}' in store ${where} (see \`gymflow store ls\`)`);
    return target;
  }

  /**
   * The ancestry of an artifact, walking parents: dataset ← scored trajectories ← trajectories ← task
   * set + checkpoint. Parents outside the store appear without an entry; an artifact reached twice is
   * expanded once (later occurrences are marked `repeated`).
   */
  async lineage(ref: string): Promise<LineageNode> {
    return lineageOf(this.backend, ref);
  }

  // ---------------------------------------------------------------------------------------------
  // Maintenance

  /**
   * Prunes an artifact: its index entry, names and lineage stay (a manifest keeps its own small object, the
   * list of what it held), but its content — a manifest's members, a plain artifact's object — is no longer
   * kept by {@link gc} and can no longer be read ({@link statForRead}). Members shared with an artifact that is
   * not pruned stay. What a long training run keeps of its old iterations: `exp/iter-3/checkpoint` still
   * says what it was made from and what was made from it, without the model. Storing the same content again
   * undoes it. Returns the entry and whether it was pruned already.
   */
  async prune(ref: string): Promise<{ entry: IndexEntry; already: boolean }> {
    return pruneArtifact(this.backend, ref);
  }

  /**
   * Deletes everything not reachable from a named root through parents and manifest members, except
   * what was touched within `graceMs`. Removes abandoned temp files first. Index entries are deleted
   * before their objects, so a crash mid-gc never leaves an entry without its object.
   */
  async gc(options: GcOptions = {}): Promise<GcReport> {
    return collectGarbage(this, { ...options, staleTempMs: this.staleTempMs });
  }

  /**
   * Checks the whole store: re-hashes every object against its name, checks every index entry (valid,
   * object present, size right), every ref (target present) and every manifest (members present).
   */
  async verify(): Promise<VerifyReport> {
    return verifyStore(this);
  }

  // ---------------------------------------------------------------------------------------------
  // Internals

  /** Writes one object if absent (freshening it if present); returns its ref. */
  private async putObject(bytes: Uint8Array): Promise<string> {
    const ref = sha256Ref(bytes);
    if (await this.backend.freshenObject(ref)) return ref;
    const dest = objectPath(this.root, ref);
    if (this.backend.kind === 'directory' || !(await pathExists(dest))) {
      await ensureDir(path.dirname(dest));
      await writeFileAtomic(this.root, dest, bytes);
    }
    await this.backend.publishObject(ref, dest, bytes.byteLength);
    return ref;
  }

  /**
   * Streams one file into a temp file under `<root>/tmp/` (same filesystem as `objects/`) while hashing
   * it, fsyncs it, then renames it onto its content address unless the object exists. Returns the
   * shard directory when it published (the caller fsyncs it).
   */
  private async putFileObject(file: string): Promise<StreamedObject & { published?: string }> {
    let src: FileHandle;
    try {
      src = await open(file, 'r');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) throw new StoreError(`cannot store ${file}: no such file`);
      throw err;
    }
    const tmp = tempPath(this.root);
    let out: FileHandle | undefined;
    try {
      out = await open(tmp, 'wx', 0o444);
      const obj = await hashCopy(src, out);
      await out.sync();
      await out.close();
      out = undefined;
      const dest = objectPath(this.root, obj.ref);
      if (await this.backend.freshenObject(obj.ref)) {
        await unlink(tmp).catch(ignoreEnoent);
        return obj;
      }
      await moveInto(tmp, dest);
      return { ...obj, published: path.dirname(dest) };
    } catch (err) {
      await out?.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw err;
    } finally {
      await src.close();
    }
  }

  /** @internal Records (or merges into) the index entry of an object already stored. */
  async record(ref: string, size: number, options: PutOptions & { format: ArtifactFormat }): Promise<IndexEntry> {
    this.checkPut(options);
    const entry = await this.backend.updateEntry(ref, (existing) => {
      if (existing) {
        // Same content stored again: keep the first kind, time and meta; add new parents and a name.
        const parents = [...existing.parents];
        for (const p of options.parents ?? []) if (!parents.includes(p)) parents.push(p);
        const next: IndexEntry = { ...existing, parents };
        if (next.name === undefined && options.name !== undefined) next.name = options.name;
        // Its content was just written (or freshened) again: a pruned artifact is whole again.
        delete next.prunedAt;
        const changed = parents.length !== existing.parents.length || next.name !== existing.name || existing.prunedAt !== undefined;
        return changed ? next : undefined;
      }
      const fresh: IndexEntry = {
        ref,
        kind: options.kind,
        format: options.format,
        size,
        createdAt: new Date().toISOString(),
        parents: [...new Set(options.parents ?? [])],
      };
      if (options.name !== undefined) fresh.name = options.name;
      if (options.meta !== undefined) fresh.meta = options.meta;
      IndexEntrySchema.parse(fresh);
      return fresh;
    });
    if (entry === undefined) throw new StoreError(`artifact ${ref} vanished from store ${this.location} while being recorded`);
    if (options.name !== undefined) await this.setRef(options.name, ref, defined({ expect: options.expectRef }));
    return entry;
  }

  private checkPut(options: PutOptions): void {
    if (!KIND_PATTERN.test(options.kind)) throw new StoreError(`invalid artifact kind '${options.kind}': expected [a-z][a-z0-9-]*, e.g. ${ARTIFACT_KINDS.join(', ')}`);
    if (options.name !== undefined) assertName(options.name);
    for (const p of options.parents ?? []) if (p.length === 0) throw new StoreError('a parent ref is empty');
  }
}

/** The streaming writer behind {@link ArtifactStore.createWriter}. */
class StreamWriter implements ArtifactWriter {
  private readonly hash = createHash('sha256');
  private bytes = 0;
  private done = false;

  private constructor(
    private readonly store: ArtifactStore,
    private readonly tmp: string,
    private readonly fh: FileHandle,
  ) {}

  static async start(store: ArtifactStore): Promise<StreamWriter> {
    const tmp = tempPath(store.root);
    const fh = await open(tmp, 'wx', 0o444);
    return new StreamWriter(store, tmp, fh);
  }

  get size(): number {
    return this.bytes;
  }

  async write(chunk: string | Uint8Array): Promise<void> {
    if (this.done) throw new StoreError('write after commit/abort');
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.hash.update(buf);
    this.bytes += buf.byteLength;
    let off = 0;
    while (off < buf.byteLength) off += (await this.fh.write(buf, off, buf.byteLength - off)).bytesWritten;
  }

  async commitObject(): Promise<string> {
    if (this.done) throw new StoreError('commit after commit/abort');
    this.done = true;
    const ref = `sha256:${this.hash.digest('hex')}`;
    try {
      await this.fh.sync();
    } finally {
      await this.fh.close();
    }
    const dest = objectPath(this.store.root, ref);
    if (await this.store.backend.freshenObject(ref)) {
      await unlink(this.tmp).catch(ignoreEnoent);
    } else {
      await moveInto(this.tmp, dest);
      await fsyncDir(path.dirname(dest));
      await this.store.backend.publishObject(ref, dest, this.bytes);
    }
    return ref;
  }

  async commit(options: PutOptions): Promise<IndexEntry> {
    const size = this.bytes;
    const ref = await this.commitObject();
    return this.store.record(ref, size, { format: 'bytes', ...options });
  }

  async abort(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await this.fh.close().catch(() => undefined);
    await unlink(this.tmp).catch(ignoreEnoent);
  }
}

function ignoreEnoent(err: unknown): void {
  if (!isErrno(err, 'ENOENT')) throw err;
}

/** Environment variable naming the local cache directory of an `s3://` store. */
export const STORE_CACHE_ENV_VAR = 'GYMFLOW_STORE_CACHE';

/** The cache directory of an `s3://` store: the option, else `$GYMFLOW_STORE_CACHE`, else `.gymflow/store-cache`. */
export function resolveCacheDir(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(explicit ?? (env[STORE_CACHE_ENV_VAR] || undefined) ?? '.gymflow/store-cache');
}
