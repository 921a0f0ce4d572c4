import type { StoreBackend } from './backend.js';
import type { IndexEntry } from './index-entry.js';
import { assertRef } from './layout.js';

/** A node of {@link lineageOf}. */
export interface LineageNode {
  ref: string;
  /** Absent when the ref is not in this store (an external checkpoint, a deleted parent). */
  entry?: IndexEntry;
  /** Ref names pointing at this artifact. */
  names: string[];
  /** Set when this artifact was already expanded elsewhere in the walk (its parents are not repeated). */
  repeated?: true;
  parents: LineageNode[];
}

/**
 * The ancestry of an artifact of a store (its `backend`), walking parents: dataset ← scored trajectories ←
 * trajectories ← task set + checkpoint. Parents outside the store appear without an entry; an artifact
 * reached twice is expanded once (later occurrences are marked `repeated`).
 */
export async function lineageOf(backend: StoreBackend, ref: string): Promise<LineageNode> {
  assertRef(ref);
  const names = new Map<string, string[]>();
  for (const r of (await backend.scanRefs()).refs) names.set(r.ref, [...(names.get(r.ref) ?? []), r.name]);
  const expanded = new Set<string>();
  const visit = async (r: string): Promise<LineageNode> => {
    const entry = await backend.readEntry(r);
    const node: LineageNode = { ref: r, names: names.get(r) ?? [], parents: [] };
    if (entry) node.entry = entry;
    if (expanded.has(r)) {
      node.repeated = true;
      return node;
    }
    expanded.add(r);
    for (const p of entry?.parents ?? []) node.parents.push(await visit(p));
    return node;
  };
  return visit(ref);
}
