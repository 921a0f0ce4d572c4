import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { isErrno, pathExists, touch } from '../core/fs.js';
import { ArtifactStore } from '../hub/store/store.js';
import { checkoutTree } from '../hub/store/tree.js';
import { defined } from '../core/defined.js';

/**
 * Where a worker's activities keep things: the artifact store (shared by every worker of a pipeline) and a
 * scratch directory (trainer runs, checked-out model and policy directories). Activities receive refs and
 * check the artifacts out here, so a pipeline's payloads never carry files or host paths of another worker.
 */

/** Defaults of a worker (its `--store` / `--work-dir`), used when the pipeline configuration gives none. */
/** A name (a workflow id, a served model, an experiment) as one file or directory name: anything but `A-Za-z0-9_.-` becomes `_`. */
export function fileSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, '_');
}

export interface WorkspaceDefaults {
  store?: string | undefined;
  workDir?: string | undefined;
}

/** An opened store and the scratch directory. */
export interface Workspace {
  store: ArtifactStore;
  workDir: string;
}

const stores = new Map<string, Promise<ArtifactStore>>();

/**
 * Opens the workspace: store root = `store` ?? the worker default ?? `$GYMFLOW_STORE` ?? `.gymflow/store`;
 * work dir = `workDir` ?? the worker default ?? `<store root>/../work`. Stores are opened once per process.
 */
export async function openWorkspace(given: WorkspaceDefaults, defaults: WorkspaceDefaults = {}): Promise<Workspace> {
  const root = given.store ?? defaults.store;
  const key = root === undefined ? '' : root.startsWith('s3://') ? root : path.resolve(root);
  let opening = stores.get(key);
  if (!opening) {
    opening = ArtifactStore.open(defined({ root }));
    stores.set(key, opening);
    opening.catch(() => stores.delete(key));
  }
  const store = await opening;
  const workDir = path.resolve(given.workDir ?? defaults.workDir ?? path.join(path.dirname(store.root), 'work'));
  await mkdir(workDir, { recursive: true });
  return { store, workDir };
}

/** Checkouts a host keeps, the most recently used first, besides any used within {@link CHECKOUT_IN_USE_MS}. */
export const KEEP_CHECKOUTS = 4;
/** A checkout used within this long is never removed: an activity may still be loading it. */
export const CHECKOUT_IN_USE_MS = 3_600_000;
/** An unfinished checkout (the temp directory of a worker that died while copying) is removed after this long. */
const STALE_CHECKOUT_TEMP_MS = 24 * 3_600_000;

/**
 * The local directory of a tree artifact (a checkpoint or an exported policy), checked out once under
 * `<workDir>/checkouts/<sha256>` and reused: content-addressed, so a directory that exists is complete
 * (`checkoutTree` renames a finished temp directory into place). Each use marks the directory used (its
 * mtime); each new checkout then prunes the others ({@link pruneCheckouts}), so a host's scratch disk holds a
 * few models however many iterations a run has. A pruned checkout is checked out again when next needed.
 */
export async function checkoutCached(ws: Workspace, ref: string): Promise<string> {
  const root = path.join(ws.workDir, 'checkouts');
  const dir = path.join(root, ref.replace(/^sha256:/, ''));
  // Marks it used (its mtime) when it exists.
  if (await touch(dir)) return dir;
  await mkdir(root, { recursive: true });
  try {
    await checkoutTree(ws.store, ref, dir);
  } catch (err) {
    // Another activity of this worker checked it out first.
    if (await pathExists(dir)) return dir;
    throw err;
  }
  await pruneCheckouts(root, { keep: KEEP_CHECKOUTS, inUseMs: CHECKOUT_IN_USE_MS });
  return dir;
}

/** What {@link pruneCheckouts} removed, and what it could not. */
export interface CheckoutPruning {
  removed: string[];
  failed: { name: string; error: string }[];
}

/**
 * Removes checkouts under `root` (`<workDir>/checkouts`) beyond the `keep` most recently used, except those
 * used within `inUseMs`, and unfinished ones (temp directories) older than a day. A checkout is renamed out of
 * the way first, so no reader ever finds half of one, and put back when a reader marked it used in the
 * meantime. Best effort: what cannot be removed is reported, never thrown.
 */
export async function pruneCheckouts(root: string, o: { keep: number; inUseMs: number; now?: number }): Promise<CheckoutPruning> {
  const now = o.now ?? Date.now();
  const report: CheckoutPruning = { removed: [], failed: [] };
  const complete: { name: string; usedAt: number }[] = [];
  const doomed: { name: string; usedAt: number }[] = [];
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const at = await stat(path.join(root, name)).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    if (at === undefined) continue;
    if (/^[0-9a-f]{64}$/.test(name)) complete.push({ name, usedAt: at });
    else if (/\.trash-/.test(name) || (/\.tmp-/.test(name) && now - at > STALE_CHECKOUT_TEMP_MS)) doomed.push({ name, usedAt: at });
  }
  complete.sort((a, b) => b.usedAt - a.usedAt);
  for (const c of complete.slice(o.keep)) if (now - c.usedAt > o.inUseMs) doomed.push(c);
  for (const { name, usedAt } of doomed) {
    const trash = name.includes('.trash-') ? name : `${name}.trash-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      if (trash !== name) {
        await rename(path.join(root, name), path.join(root, trash));
        // Used between the listing and the rename: put it back (unless it was checked out again already).
        if ((await stat(path.join(root, trash))).mtimeMs > usedAt && !(await pathExists(path.join(root, name)))) {
          await rename(path.join(root, trash), path.join(root, name));
          continue;
        }
      }
      await rm(path.join(root, trash), { recursive: true, force: true });
      report.removed.push(name);
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) report.failed.push({ name, error: (err as Error).message });
    }
  }
  return report;
}
