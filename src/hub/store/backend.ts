import type { BadRef } from './refs.js';
import type { IndexEntry } from './index-entry.js';

/**
 * Where a store keeps its index entries, refs and the authoritative copy of its objects (docs/store.md): a
 * directory (dir-backend.ts) or a bucket (s3-backend.ts). `ArtifactStore` (store.ts) writes and reads objects
 * through a local directory in both cases — the store itself, or for a bucket the host's cache, keyed by content
 * hash — and asks the backend to publish an object written there or to fetch one that is missing; everything else
 * (entries, refs, gc's listing and deleting) goes through this interface, so `gc`, `verify`, `lineage` and `resolve`
 * are written once.
 */
export interface StoreBackend {
  /** `directory` (objects in the local root) or `s3` (objects in the bucket, the local root a cache). */
  readonly kind: 'directory' | 's3';
  /** The store as users name it: the root directory, or `s3://bucket/prefix`. */
  readonly location: string;

  // Index entries (index-entry.ts).
  /** An artifact's entry, or `undefined` (also for a string that is no full ref). */
  readEntry(ref: string): Promise<IndexEntry | undefined>;
  /**
   * Reads the entry of `ref` (or nothing), applies `change` and publishes its result, atomically with respect to
   * other writers of the same entry where the backend can (a bucket: `If-Match`/`If-None-Match`, retried on a lost
   * race). `change` returning `undefined` means "unchanged": the entry is freshened (gc's grace period) and returned.
   */
  updateEntry(ref: string, change: (current: IndexEntry | undefined) => IndexEntry | undefined): Promise<IndexEntry | undefined>;
  /** Every entry's ref, where it lives (for messages) and when it was last written or freshened. */
  listEntries(): Promise<Listed[]>;
  /** Parses a listed entry; throws a StoreError naming `where` when it is not an entry. */
  readListed(item: Listed): Promise<IndexEntry>;
  /** Refs of the entries whose hex digest starts with `hex` (at least two digits). */
  entriesWithPrefix(hex: string): Promise<string[]>;
  deleteEntries(refs: readonly string[]): Promise<void>;

  // Refs (refs.ts).
  /** See `ArtifactStore.checkName`. */
  checkName(name: string): Promise<void>;
  /** See `ArtifactStore.checkNewName`. */
  checkNewName(name: string, options: { force?: boolean }): Promise<void>;
  readRef(name: string): Promise<string | undefined>;
  /**
   * Points `name` at `ref` (an indexed artifact) with a conditional write: against `expect` when given (`null`: the
   * name must not exist), else against the target read at the start of the call; the name already naming `ref`
   * succeeds. A lost race throws RefConflictError.
   */
  writeRef(name: string, ref: string, expect?: string | null): Promise<void>;
  deleteRef(name: string): Promise<boolean>;
  scanRefs(): Promise<{ refs: { name: string; ref: string }[]; bad: BadRef[] }>;
  /** Where a ref lives (for messages). */
  refLocation(name: string): string;

  // Objects: the authoritative copies.
  /** Every object, with its size and when it was written or last freshened. */
  listObjects(): Promise<(Listed & { size: number })[]>;
  /** Things among the objects that no ref names (written outside the store API). */
  strayObjects(): Promise<string[]>;
  hasObject(ref: string): Promise<boolean>;
  /** Marks an existing object recently used (gc's grace period protects it); false when it does not exist. */
  freshenObject(ref: string): Promise<boolean>;
  /** Publishes an object already complete at the local file `file` (the directory backend: nothing to do). */
  publishObject(ref: string, file: string, size: number): Promise<void>;
  /** Downloads an object into the new local file `dest`, checking its hash; false when the backend lacks it. */
  fetchObject(ref: string, dest: string): Promise<boolean>;
  /** The sha256 ref of an object's bytes as stored (for verify), read in bounded chunks. */
  hashObject(ref: string): Promise<string>;
  deleteObjects(refs: readonly string[]): Promise<void>;
  /** Where an object lives (for messages). */
  objectLocation(ref: string): string;

  /** Backend-specific clean-up of `gc` (a bucket: aborted uploads and stale freshness markers); returns a count. */
  collectExtras(options: { graceMs: number; now: number; dryRun: boolean }): Promise<number>;
  /** Releases connections. */
  close(): void;
}

/** One listed entry or object of a backend. */
export interface Listed {
  ref: string;
  /** A path or URL, for messages. */
  where: string;
  mtimeMs: number;
}
