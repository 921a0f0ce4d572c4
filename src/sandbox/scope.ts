import { dockerClient } from './docker.js';
import { SandboxPool } from './pool.js';
import { sandboxScope, type ScopeLabels } from './scope-context.js';

export { LABEL_ACTIVITY, LABEL_ATTEMPT, LABEL_RUN, LABEL_WORKFLOW, scopeLabels, type ScopeLabels } from './scope-context.js';

/** The warm pool of the scope the caller runs in, if any (see scope-context.ts). */
export function scopePool(): SandboxPool | undefined {
  return sandboxScope.getStore()?.pool;
}

/**
 * Runs `work` in a scope with `labels`; when it settles, the scope's pool is closed (its spares removed). The
 * sandboxes `work`'s environments own are theirs to close, as everywhere.
 *
 * @example
 * ```ts
 * await runInSandboxScope({ [LABEL_WORKFLOW]: 'loop-1', [LABEL_RUN]: runId, [LABEL_ACTIVITY]: '7' }, () => collect({ … }));
 * ```
 */
export async function runInSandboxScope<T>(labels: ScopeLabels, work: () => Promise<T>): Promise<T> {
  const pool = new SandboxPool();
  try {
    return await sandboxScope.run({ labels, pool }, work);
  } finally {
    await pool.close();
  }
}

/**
 * Removes every sandbox container whose labels include all of `labels` (at least one required), running or not;
 * returns their ids. A retried activity calls it with its workflow, run and activity before it starts, to remove
 * what its dead predecessor left.
 */
export async function removeScopeSandboxes(labels: ScopeLabels): Promise<string[]> {
  const filters = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
  if (filters.length === 0) throw new Error('removeScopeSandboxes: no label to select by');
  const docker = dockerClient();
  const list = await docker.listContainers({ all: true, filters: { label: filters } });
  const removed: string[] = [];
  for (const c of list) {
    try {
      await docker.getContainer(c.Id).remove({ force: true });
      removed.push(c.Id);
    } catch (err) {
      // Already gone (removed by its own cleanup meanwhile): nothing left to do.
      if (!/no such container|already in progress/i.test(String(err))) throw err;
    }
  }
  return removed;
}
