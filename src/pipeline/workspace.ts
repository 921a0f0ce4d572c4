import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ArtifactStore } from '../hub/store/store.js';
import { checkoutTree } from '../hub/store/tree.js';

/**
 * Where a worker's activities keep things: the artifact store (shared by every worker of a pipeline) and a
 * scratch directory (trainer runs, checked-out model and policy directories). Activities receive refs and
 * check the artifacts out here, so a pipeline's payloads never carry files or host paths of another worker.
 */

/** Defaults of a worker (its `--store` / `--work-dir`), used when the pipeline configuration gives none. */
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
  const key = root === undefined ? '' : path.resolve(root);
  let opening = stores.get(key);
  if (!opening) {
    opening = ArtifactStore.open(root === undefined ? {} : { root });
    stores.set(key, opening);
    opening.catch(() => stores.delete(key));
  }
  const store = await opening;
  const workDir = path.resolve(given.workDir ?? defaults.workDir ?? path.join(path.dirname(store.root), 'work'));
  await mkdir(workDir, { recursive: true });
  return { store, workDir };
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * The local directory of a tree artifact (a checkpoint or an exported policy), checked out once under
 * `<workDir>/checkouts/<sha256>` and reused: content-addressed, so a directory that exists is complete
 * (`checkoutTree` renames a finished temp directory into place).
 */
export async function checkoutCached(ws: Workspace, ref: string): Promise<string> {
  const dir = path.join(ws.workDir, 'checkouts', ref.replace(/^sha256:/, ''));
  if (await exists(dir)) return dir;
  await mkdir(path.dirname(dir), { recursive: true });
  try {
    await checkoutTree(ws.store, ref, dir);
  } catch (err) {
    // Another activity of this worker checked it out first.
    if (await exists(dir)) return dir;
    throw err;
  }
  return dir;
}
