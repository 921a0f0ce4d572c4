import { AsyncLocalStorage } from 'node:async_hooks';
import type { SandboxPool } from './pool.js';

/**
 * Sandbox scopes: a unit of work (a pipeline activity) whose sandboxes carry its labels and share a warm pool of
 * their own, so that they can be found and removed as a whole — by a retry of the unit, after its worker died —
 * and never outlive it through a pool another unit keeps (`runInSandboxScope` in scope.ts).
 *
 * Every sandbox created inside a scope (however deep: the scope follows the async context, as environments make
 * their sandboxes in `reset`) carries the scope's labels; `gymflow/sandbox-v0`'s `'shared'` pool is the scope's
 * pool there. This module holds the context alone, so that `Sandbox` can read it without importing the pool.
 */

/** Labels naming the workflow, run and activity whose work created a sandbox. */
export const LABEL_WORKFLOW = 'gymflow.sandbox.workflow';
export const LABEL_RUN = 'gymflow.sandbox.run';
export const LABEL_ACTIVITY = 'gymflow.sandbox.activity';
/** The activity's attempt (1, 2, …) that created it. */
export const LABEL_ATTEMPT = 'gymflow.sandbox.attempt';

/** The labels of a scope: the keys above with their values. */
export type ScopeLabels = Partial<Record<typeof LABEL_WORKFLOW | typeof LABEL_RUN | typeof LABEL_ACTIVITY | typeof LABEL_ATTEMPT, string>>;

/** What a scope holds. */
export interface SandboxScope {
  labels: ScopeLabels;
  pool: SandboxPool;
}

/** The scope of the current async context. */
export const sandboxScope = new AsyncLocalStorage<SandboxScope>();

/** The labels of the scope the caller runs in (none outside a scope). */
export function scopeLabels(): ScopeLabels {
  return sandboxScope.getStore()?.labels ?? {};
}
