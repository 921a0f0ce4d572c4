import { readdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir, isErrno } from '../../core/fs.js';
import { StoreError } from '../errors.js';
import { mapPool } from '../pool.js';
import { cleanTempFiles, TMP_DIR } from './atomic.js';
import { isManifest, parseIndexEntry, readIndexEntry, writeIndexEntry, type IndexEntry } from './index-entry.js';
import { isRef, objectPath, refPath } from './layout.js';
import { manifestMembers } from './manifests.js';
import { readObject } from './objects.js';
import { scanRefs } from './refs.js';
import { fsyncShards, IO_CONCURRENCY, shardFiles, strayObjectFiles } from './shards.js';
import { ABANDONED_JOURNAL_MS, removeAbandonedJournals } from './journal.js';
import { hashFile } from './stream.js';

/**
 * Maintenance of the artifact store (docs/store.md): pruning an artifact's content, collecting what no
 * named root reaches (`gc`), and checking the whole store (`verify`).
 */

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
 * Prunes an artifact of the store at `root`: its index entry, names and lineage stay (a manifest keeps its
 * own small object, the list of what it held), but its content — a manifest's members, a plain artifact's
 * object — is no longer kept by {@link collectGarbage} and can no longer be read. Members shared with an
 * artifact that is not pruned stay. Storing the same content again undoes it. Returns the entry and whether
 * it was pruned already.
 *
 * @throws StoreError when the artifact is not in the store.
 */
export async function pruneArtifact(root: string, ref: string): Promise<{ entry: IndexEntry; already: boolean }> {
  const existing = await readIndexEntry(root, ref);
  if (!existing) throw new StoreError(`artifact ${ref} is not in store ${root}`);
  if (existing.prunedAt !== undefined) return { entry: existing, already: true };
  const entry: IndexEntry = { ...existing, prunedAt: new Date().toISOString() };
  await writeIndexEntry(root, entry);
  return { entry, already: false };
}

/**
 * Deletes everything in the store at `root` not reachable from a named root through parents and manifest
 * members, except what was touched within `graceMs`. Removes temp files older than `staleTempMs` (or
 * `graceMs`, if shorter) first. Index entries are deleted before their objects, so a crash mid-gc never
 * leaves an entry without its object.
 */
export async function collectGarbage(root: string, options: GcOptions & { staleTempMs: number }): Promise<GcReport> {
  const graceMs = options.graceMs ?? 3_600_000;
  const dryRun = options.dryRun ?? false;
  const now = Date.now();
  const temps = dryRun ? { removed: [] } : await cleanTempFiles(root, { staleMs: Math.min(options.staleTempMs, graceMs), now });
  const journalsRemoved = dryRun ? 0 : await removeAbandonedJournals(root, ABANDONED_JOURNAL_MS, now);

  const { refs, bad } = await scanRefs(root);
  if (bad[0] !== undefined) {
    throw new StoreError(`gc: ${bad[0].path} holds no ref (${bad[0].message}); what it names cannot be kept alive. Fix it (gymflow store tag) or remove it first`);
  }
  const indexFiles = await shardFiles(root, 'index');
  // Recently written entries are roots too: their writer may be about to name them.
  const young = indexFiles.filter((f) => now - f.mtimeMs < graceMs).map((f) => f.ref);
  const liveArtifacts = new Set<string>();
  const liveObjects = new Set<string>();
  const queue = [...refs.map((r) => r.ref), ...young];
  while (queue.length > 0) {
    const ref = queue.pop() as string;
    if (liveArtifacts.has(ref)) continue;
    const entry = await readIndexEntry(root, ref);
    if (!entry) continue;
    liveArtifacts.add(ref);
    // A pruned artifact keeps its entry and, for a manifest, the manifest itself, but not its content.
    if (entry.prunedAt === undefined || isManifest(entry)) liveObjects.add(ref);
    if (entry.prunedAt === undefined) for (const member of await members(root, entry)) liveObjects.add(member);
    queue.push(...entry.parents.filter(isRef));
  }

  const deletedArtifacts: string[] = [];
  for (const f of indexFiles) {
    if (liveArtifacts.has(f.ref)) continue;
    deletedArtifacts.push(f.ref);
    if (!dryRun) await unlink(f.file).catch(ignoreEnoent);
  }
  if (!dryRun && deletedArtifacts.length > 0) await fsyncShards(root, 'index', deletedArtifacts);

  let deletedObjects = 0;
  let freedBytes = 0;
  const touched = new Set<string>();
  for (const o of await shardFiles(root, 'objects')) {
    if (liveObjects.has(o.ref) || now - o.mtimeMs < graceMs) continue;
    deletedObjects++;
    freedBytes += o.size;
    if (!dryRun) {
      await unlink(o.file).catch(ignoreEnoent);
      touched.add(path.dirname(o.file));
    }
  }
  await mapPool([...touched], IO_CONCURRENCY, (d) => fsyncDir(d));
  return {
    roots: refs.length,
    keptArtifacts: liveArtifacts.size,
    keptObjects: liveObjects.size,
    deletedArtifacts,
    deletedObjects,
    freedBytes,
    tempFilesRemoved: temps.removed.length,
    journalsRemoved,
    dryRun,
  };
}

/**
 * Checks the whole store at `root`: re-hashes every object against its name, checks every index entry
 * (valid, object present, size right), every ref (target present) and every manifest (members present).
 */
export async function verifyStore(root: string): Promise<VerifyReport> {
  const problems: VerifyProblem[] = [];
  const warnings: string[] = [];
  const objects = await shardFiles(root, 'objects');
  let bytes = 0;
  await mapPool(objects, 8, async (o) => {
    bytes += o.size;
    const actual = (await hashFile(o.file)).ref;
    if (actual !== o.ref) problems.push({ code: 'corrupt-object', path: o.file, ref: o.ref, message: `content hashes to ${actual}` });
  });
  for (const stray of await strayObjectFiles(root)) {
    problems.push({ code: 'stray-file', path: stray, message: 'not named by a sha256 (a file written outside the store API)' });
  }
  const objectSizes = new Map(objects.map((o) => [o.ref, o.size]));

  const entries = new Map<string, IndexEntry>();
  for (const f of await shardFiles(root, 'index')) {
    let entry: IndexEntry;
    try {
      entry = parseIndexEntry(await readFile(f.file, 'utf8'), f.file);
    } catch (err) {
      problems.push({ code: 'bad-index-entry', path: f.file, ref: f.ref, message: (err as Error).message });
      continue;
    }
    if (entry.ref !== f.ref) {
      problems.push({ code: 'bad-index-entry', path: f.file, ref: f.ref, message: `entry names ${entry.ref}` });
      continue;
    }
    entries.set(entry.ref, entry);
    const size = objectSizes.get(entry.ref);
    // A pruned artifact's content may be gone (gc): only its entry, and a manifest's own object, must be whole.
    const pruned = entry.prunedAt !== undefined;
    if (size === undefined && pruned && !isManifest(entry)) continue;
    if (size === undefined) {
      problems.push({ code: 'missing-object', path: objectPath(root, entry.ref), ref: entry.ref, message: `the ${entry.kind} artifact has no object` });
      continue;
    }
    if (size !== entry.size) problems.push({ code: 'size-mismatch', path: f.file, ref: entry.ref, message: `index says ${entry.size} bytes, object has ${size}` });
    if (pruned) continue;
    try {
      const missing = (await members(root, entry)).filter((m) => !objectSizes.has(m));
      if (missing.length > 0) {
        problems.push({ code: 'missing-member', path: objectPath(root, entry.ref), ref: entry.ref, message: `${missing.length} member object(s) missing, e.g. ${missing[0]}` });
      }
    } catch (err) {
      problems.push({ code: 'bad-manifest', path: objectPath(root, entry.ref), ref: entry.ref, message: (err as Error).message });
    }
  }
  for (const entry of entries.values()) {
    for (const p of entry.parents) if (!entries.has(p)) warnings.push(`${entry.ref} (${entry.kind}): parent ${p} is not in this store`);
  }
  const refs = await listRefsLenient(root, problems);
  for (const r of refs) {
    if (!entries.has(r.ref)) problems.push({ code: 'dangling-ref', path: refPath(root, r.name), ref: r.ref, message: `refs/${r.name} points at an artifact not in the index` });
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
async function members(root: string, entry: IndexEntry): Promise<string[]> {
  if (!isManifest(entry)) return [];
  return manifestMembers(entry.format, (await readObject(root, entry.ref)).toString('utf8'), entry.ref);
}

/** The refs {@link verifyStore} checks; ref files that hold no ref, or an unreadable `refs/`, become problems. */
async function listRefsLenient(root: string, problems: VerifyProblem[]): Promise<{ name: string; ref: string }[]> {
  try {
    const { refs, bad } = await scanRefs(root);
    for (const b of bad) problems.push({ code: 'dangling-ref', path: b.path, message: `refs/${b.name} holds no ref: ${b.message}` });
    return refs;
  } catch (err) {
    problems.push({ code: 'dangling-ref', path: path.join(root, 'refs'), message: (err as Error).message });
    return [];
  }
}

function ignoreEnoent(err: unknown): void {
  if (!isErrno(err, 'ENOENT')) throw err;
}
