import { readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { isErrno } from '../../core/fs.js';
import { StoreError } from '../errors.js';
import { mapPool } from '../pool.js';
import { cleanTempFiles, TMP_DIR } from './atomic.js';
import type { StoreBackend } from './backend.js';
import { isManifest, type IndexEntry } from './index-entry.js';
import { isRef, objectPath } from './layout.js';
import { manifestMembers } from './manifests.js';
import { IO_CONCURRENCY } from './shards.js';
import { ABANDONED_JOURNAL_MS, removeAbandonedJournals } from './journal.js';

/**
 * Maintenance of the artifact store (docs/store.md): pruning an artifact's content, collecting what no
 * named root reaches (`gc`), and checking the whole store (`verify`).
 */

/** What maintenance needs of a store: its local directory (temp files, journals, cache), backend and object reader. */
export interface MaintainedStore {
  readonly root: string;
  readonly backend: StoreBackend;
  get(ref: string): Promise<Buffer>;
}

/** Options of {@link collectGarbage}. */
export interface GcOptions {
  /**
   * Objects and index entries touched less than this long ago are kept even when unreachable, so a
   * write in flight (objects stored, ref not yet set) is not collected under its writer. Default 1 h.
   */
  graceMs?: number;
  /** Report what would be deleted without deleting. */
  dryRun?: boolean;
}

/** What {@link collectGarbage} did. */
export interface GcReport {
  roots: number;
  keptArtifacts: number;
  keptObjects: number;
  deletedArtifacts: string[];
  deletedObjects: number;
  freedBytes: number;
  tempFilesRemoved: number;
  /** Episode journals nobody wrote to for {@link ABANDONED_JOURNAL_MS} (their unit of work will not be retried). */
  journalsRemoved: number;
  /** An `s3://` store: stale freshness markers and abandoned multipart uploads removed (0 for a directory). */
  backendItemsRemoved: number;
  dryRun: boolean;
}

/** One problem {@link verifyStore} found. */
export interface VerifyProblem {
  code: 'corrupt-object' | 'missing-object' | 'size-mismatch' | 'bad-index-entry' | 'dangling-ref' | 'missing-member' | 'bad-manifest' | 'stray-file';
  path: string;
  ref?: string;
  message: string;
}

/** The result of {@link verifyStore}. */
export interface VerifyReport {
  ok: boolean;
  objects: number;
  artifacts: number;
  refs: number;
  bytes: number;
  tempFiles: number;
  problems: VerifyProblem[];
  /** Not errors: parents outside the store, unreferenced objects awaiting gc. */
  warnings: string[];
}

/**
 * Prunes an artifact of a store (its `backend`): its index entry, names and lineage stay (a manifest keeps its
 * own small object, the list of what it held), but its content — a manifest's members, a plain artifact's
 * object — is no longer kept by {@link collectGarbage} and can no longer be read. Members shared with an
 * artifact that is not pruned stay. Storing the same content again undoes it. Returns the entry and whether
 * it was pruned already.
 *
 * @throws StoreError when the artifact is not in the store.
 */
export async function pruneArtifact(backend: StoreBackend, ref: string): Promise<{ entry: IndexEntry; already: boolean }> {
  let already = false;
  const entry = await backend.updateEntry(ref, (existing) => {
    already = existing?.prunedAt !== undefined;
    if (!existing || already) return undefined;
    return { ...existing, prunedAt: new Date().toISOString() };
  });
  if (!entry) throw new StoreError(`artifact ${ref} is not in store ${backend.location}`);
  return { entry, already };
}

/**
 * Deletes everything in a store not reachable from a named root through parents and manifest
 * members, except what was touched within `graceMs`. Removes temp files older than `staleTempMs` (or
 * `graceMs`, if shorter) first. Index entries are deleted before their objects, so a crash mid-gc never
 * leaves an entry without its object.
 */
export async function collectGarbage(store: MaintainedStore, options: GcOptions & { staleTempMs: number }): Promise<GcReport> {
  const { root, backend } = store;
  const graceMs = options.graceMs ?? 3_600_000;
  const dryRun = options.dryRun ?? false;
  const now = Date.now();
  const temps = dryRun ? { removed: [] } : await cleanTempFiles(root, { staleMs: Math.min(options.staleTempMs, graceMs), now });
  const journalsRemoved = dryRun ? 0 : await removeAbandonedJournals(root, ABANDONED_JOURNAL_MS, now);

  const { refs, bad } = await backend.scanRefs();
  if (bad[0] !== undefined) {
    throw new StoreError(`gc: ${bad[0].path} holds no ref (${bad[0].message}); what it names cannot be kept alive. Fix it (gymflow store tag) or remove it first`);
  }
  const indexFiles = await backend.listEntries();
  // Recently written entries are roots too: their writer may be about to name them.
  const young = indexFiles.filter((f) => now - f.mtimeMs < graceMs).map((f) => f.ref);
  const liveArtifacts = new Set<string>();
  const liveObjects = new Set<string>();
  const queue = [...refs.map((r) => r.ref), ...young];
  while (queue.length > 0) {
    const ref = queue.pop() as string;
    if (liveArtifacts.has(ref)) continue;
    const entry = await backend.readEntry(ref);
    if (!entry) continue;
    liveArtifacts.add(ref);
    // A pruned artifact keeps its entry and, for a manifest, the manifest itself, but not its content.
    if (entry.prunedAt === undefined || isManifest(entry)) liveObjects.add(ref);
    if (entry.prunedAt === undefined) for (const member of await members(store, entry)) liveObjects.add(member);
    queue.push(...entry.parents.filter(isRef));
  }

  const deletedArtifacts = indexFiles.filter((f) => !liveArtifacts.has(f.ref)).map((f) => f.ref);
  if (!dryRun) await backend.deleteEntries(deletedArtifacts);

  let freedBytes = 0;
  const deleted: string[] = [];
  for (const o of await backend.listObjects()) {
    if (liveObjects.has(o.ref) || now - o.mtimeMs < graceMs) continue;
    deleted.push(o.ref);
    freedBytes += o.size;
  }
  const deletedObjects = deleted.length;
  let backendItemsRemoved = 0;
  if (!dryRun) {
    await backend.deleteObjects(deleted);
    // An s3:// store's cache: its copies of what the bucket no longer has go too.
    if (backend.kind === 's3') await mapPool(deleted, IO_CONCURRENCY, (ref) => unlink(objectPath(root, ref)).catch(ignoreEnoent));
    backendItemsRemoved = await backend.collectExtras({ graceMs, now, dryRun });
  }
  return {
    roots: refs.length,
    keptArtifacts: liveArtifacts.size,
    keptObjects: liveObjects.size,
    deletedArtifacts,
    deletedObjects,
    freedBytes,
    tempFilesRemoved: temps.removed.length,
    journalsRemoved,
    backendItemsRemoved,
    dryRun,
  };
}

/**
 * Checks a whole store: re-hashes every object against its name, checks every index entry
 * (valid, object present, size right), every ref (target present) and every manifest (members present).
 */
export async function verifyStore(store: MaintainedStore): Promise<VerifyReport> {
  const { root, backend } = store;
  const problems: VerifyProblem[] = [];
  const warnings: string[] = [];
  const objects = await backend.listObjects();
  let bytes = 0;
  await mapPool(objects, 8, async (o) => {
    bytes += o.size;
    const actual = await backend.hashObject(o.ref);
    if (actual !== o.ref) problems.push({ code: 'corrupt-object', path: o.where, ref: o.ref, message: `content hashes to ${actual}` });
  });
  for (const stray of await backend.strayObjects()) {
    problems.push({ code: 'stray-file', path: stray, message: 'not named by a sha256 (a file written outside the store API)' });
  }
  const objectSizes = new Map(objects.map((o) => [o.ref, o.size]));

  const entries = new Map<string, IndexEntry>();
  for (const f of await backend.listEntries()) {
    let entry: IndexEntry;
    try {
      entry = await backend.readListed(f);
    } catch (err) {
      problems.push({ code: 'bad-index-entry', path: f.where, ref: f.ref, message: (err as Error).message });
      continue;
    }
    if (entry.ref !== f.ref) {
      problems.push({ code: 'bad-index-entry', path: f.where, ref: f.ref, message: `entry names ${entry.ref}` });
      continue;
    }
    entries.set(entry.ref, entry);
    const size = objectSizes.get(entry.ref);
    // A pruned artifact's content may be gone (gc): only its entry, and a manifest's own object, must be whole.
    const pruned = entry.prunedAt !== undefined;
    if (size === undefined && pruned && !isManifest(entry)) continue;
    if (size === undefined) {
      problems.push({ code: 'missing-object', path: backend.objectLocation(entry.ref), ref: entry.ref, message: `the ${entry.kind} artifact has no object` });
      continue;
    }
    if (size !== entry.size) problems.push({ code: 'size-mismatch', path: f.where, ref: entry.ref, message: `index says ${entry.size} bytes, object has ${size}` });
    if (pruned) continue;
    try {
      const missing = (await members(store, entry)).filter((m) => !objectSizes.has(m));
      if (missing.length > 0) {
        problems.push({ code: 'missing-member', path: backend.objectLocation(entry.ref), ref: entry.ref, message: `${missing.length} member object(s) missing, e.g. ${missing[0]}` });
      }
    } catch (err) {
      problems.push({ code: 'bad-manifest', path: backend.objectLocation(entry.ref), ref: entry.ref, message: (err as Error).message });
    }
  }
  for (const entry of entries.values()) {
    for (const p of entry.parents) if (!entries.has(p)) warnings.push(`${entry.ref} (${entry.kind}): parent ${p} is not in this store`);
  }
  const refs = await listRefsLenient(backend, problems);
  for (const r of refs) {
    if (!entries.has(r.ref)) problems.push({ code: 'dangling-ref', path: backend.refLocation(r.name), ref: r.ref, message: `refs/${r.name} points at an artifact not in the index` });
  }
  let tempFiles = 0;
  try {
    tempFiles = (await readdir(path.join(root, TMP_DIR))).length;
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
  return { ok: problems.length === 0, objects: objects.length, artifacts: entries.size, refs: refs.length, bytes, tempFiles, problems, warnings };
}

/** Member objects of a manifest artifact (empty for plain ones). */
async function members(store: MaintainedStore, entry: IndexEntry): Promise<string[]> {
  if (!isManifest(entry)) return [];
  return manifestMembers(entry.format, (await store.get(entry.ref)).toString('utf8'), entry.ref);
}

/** The refs {@link verifyStore} checks; ref files that hold no ref, or an unreadable `refs/`, become problems. */
async function listRefsLenient(backend: StoreBackend, problems: VerifyProblem[]): Promise<{ name: string; ref: string }[]> {
  try {
    const { refs, bad } = await backend.scanRefs();
    for (const b of bad) problems.push({ code: 'dangling-ref', path: b.path, message: `refs/${b.name} holds no ref: ${b.message}` });
    return refs;
  } catch (err) {
    problems.push({ code: 'dangling-ref', path: `${backend.location}/refs`, message: (err as Error).message });
    return [];
  }
}

function ignoreEnoent(err: unknown): void {
  if (!isErrno(err, 'ENOENT')) throw err;
}
