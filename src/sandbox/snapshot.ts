import { createHash } from 'node:crypto';
import { packTar, unpackTar } from './tar.js';

/** How a work dir differs from its initial state. */
export interface FsDiff {
  added: string[];
  modified: string[];
  deleted: string[];
}

/** The name of the facts file inside a snapshot archive. */
export const SNAPSHOT_FACTS = 'snapshot.json';
/** The folder of changed files inside a snapshot archive. */
export const SNAPSHOT_FILES = 'files/';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/**
 * Compares a work dir archive with the initial files (path → content). `.git` is left out: its changes are
 * reported through git itself in the facts.
 */
export async function diffArchive(initial: Readonly<Record<string, string | Buffer>>, current: Buffer): Promise<{ diff: FsDiff; changed: Map<string, Buffer> }> {
  const now = new Map<string, Buffer>();
  for (const e of await unpackTar(current)) {
    if (e.type !== 'file' || e.path === '.git' || e.path.startsWith('.git/')) continue;
    now.set(e.path, e.content);
  }
  const diff: FsDiff = { added: [], modified: [], deleted: [] };
  const changed = new Map<string, Buffer>();
  for (const [path, content] of now) {
    const before = initial[path];
    if (before === undefined) diff.added.push(path);
    else if (sha(Buffer.from(before)) !== sha(content)) diff.modified.push(path);
    else continue;
    changed.set(path, content);
  }
  for (const path of Object.keys(initial)) if (!now.has(path)) diff.deleted.push(path);
  for (const list of [diff.added, diff.modified, diff.deleted]) list.sort();
  return { diff, changed };
}

/**
 * One snapshot file: a tar holding `snapshot.json` (the facts: sandbox, task, diff, anything else given)
 * and `files/<path>` for every added or modified file.
 */
export async function buildSnapshot(facts: Record<string, unknown>, diff: FsDiff, changed: ReadonlyMap<string, Buffer>): Promise<Buffer> {
  const entries = [{ path: SNAPSHOT_FACTS, content: `${JSON.stringify({ ...facts, diff }, null, 2)}\n` }];
  for (const [path, content] of [...changed].sort(([a], [b]) => a.localeCompare(b))) entries.push({ path: `${SNAPSHOT_FILES}${path}`, content: content.toString('latin1') });
  return packTar(entries.map((e) => ({ path: e.path, content: Buffer.from(e.content, e.path === SNAPSHOT_FACTS ? 'utf8' : 'latin1') })));
}
