import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { formatZodIssues } from '../../core/trajectory.js';
import { isErrno } from '../../core/fs.js';
import { StoreError } from '../errors.js';
import { writeFileAtomic } from './atomic.js';
import { indexPath, isRef } from './layout.js';

/**
 * The index of the artifact store (docs/store.md): one small JSON file per artifact
 * (`index/ab/cdef….json`) with its kind, format, size, creation time, parents and optional name. No shared
 * file is ever rewritten, so concurrent writers never lose each other's entries and a crash can tear nothing.
 */

/** Artifact kinds gymflow writes; other kinds matching `[a-z][a-z0-9-]*` are accepted too. */
export const ARTIFACT_KINDS = [
  'task-set',
  'trajectories',
  'scored-trajectories',
  'preferences',
  'dataset',
  'checkpoint',
  'calibration',
  'eval',
  'blob',
] as const;

/** How an artifact's bytes are to be read. `trajectory-set` and `tree` are manifests with members. */
export const ARTIFACT_FORMATS = ['bytes', 'json', 'trajectory-set', 'tree'] as const;
/** One of {@link ARTIFACT_FORMATS}. */
export type ArtifactFormat = (typeof ARTIFACT_FORMATS)[number];

/** The index entry of one artifact. */
export const IndexEntrySchema = z
  .object({
    ref: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    kind: z.string().regex(/^[a-z][a-z0-9-]*$/, 'expected a kind like task-set, trajectories, dataset'),
    format: z.enum(ARTIFACT_FORMATS),
    /** Bytes of the artifact's own object (a manifest's size, not its members'). */
    size: z.number().int().nonnegative(),
    createdAt: z.iso.datetime(),
    /** Artifacts this one was made from (refs; they need not be in this store). */
    parents: z.array(z.string().min(1)),
    /** The ref name given when the artifact was first stored. */
    name: z.string().optional(),
    /** Small facts about the artifact (counts, a summary). */
    meta: z.record(z.string(), z.unknown()).optional(),
    /**
     * When the artifact was pruned (`ArtifactStore.prune`, maintenance.ts): its entry and lineage stay, its content
     * (a manifest's members, a plain artifact's object) is no longer kept by gc and can no longer be read.
     */
    prunedAt: z.iso.datetime().optional(),
  })
  .strict();

/** One artifact's index entry. */
export type IndexEntry = z.infer<typeof IndexEntrySchema>;

/** Whether an artifact is a manifest, whose members are other objects (`trajectory-set`, `tree`). */
export function isManifest(entry: IndexEntry): boolean {
  return entry.format === 'trajectory-set' || entry.format === 'tree';
}

/**
 * Parses the text of an index file.
 *
 * @throws StoreError naming `file` (and the JSON path) when it is not JSON or not an {@link IndexEntry}.
 */
export function parseIndexEntry(text: string, file: string): IndexEntry {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StoreError(`${file} $: invalid JSON (${(err as Error).message})`);
  }
  const r = IndexEntrySchema.safeParse(value);
  if (!r.success) throw new StoreError(formatZodIssues(r.error, file).join('\n'));
  return r.data;
}

/** The index entry of `ref` in the store at `root`, or `undefined` (also for a string that is no full ref). */
export async function readIndexEntry(root: string, ref: string): Promise<IndexEntry | undefined> {
  if (!isRef(ref)) return undefined;
  const file = indexPath(root, ref);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
  return parseIndexEntry(text, file);
}

/** Publishes an artifact's index entry atomically (its shard directory must exist). */
export async function writeIndexEntry(root: string, entry: IndexEntry): Promise<void> {
  await writeFileAtomic(root, indexPath(root, entry.ref), `${JSON.stringify(entry, null, 2)}\n`);
}
