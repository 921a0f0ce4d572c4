/**
 * The loop's `retention` (CPU queue): `pruneModels` prunes the checkpoints and ONNX policies of the
 * iterations the configuration lets go (`refsToPrune`, src/loop/plan.ts). Pruning keeps an artifact's
 * entry, names and lineage and releases its files for the next `gymflow store gc` (docs/store.md,
 * "Pruning"). Idempotent: a retry, or a ref pruned after an earlier iteration, changes nothing.
 */
import { z } from 'zod';
import { openWorkspace, type WorkspaceDefaults } from '../src/runtime/workspace.js';
import { parseInput, withFailureMapping } from './common.js';
import { storeRef as ref } from './schemas.js';

/** What `pruneModels` did: refs it pruned now, and refs the store does not have (nothing to prune). */
export interface PruneResult {
  pruned: string[];
  missing: string[];
}

/** The input of `pruneModels` (parsed at run time; typed for the workflows that call it). */
export const PruneModelsInputSchema = z.object({ refs: z.array(ref), store: z.string().optional(), workDir: z.string().optional() });

/** Retention activities; `defaults` are the worker's store and work directory. */
export function createRetentionActivities(defaults: WorkspaceDefaults) {
  return {
    /** Prunes the given artifacts (see the module comment). */
    async pruneModels(input: z.input<typeof PruneModelsInputSchema>): Promise<PruneResult> {
      const o = parseInput(PruneModelsInputSchema, input, 'pruneModels');
      return withFailureMapping(async () => {
        const { store } = await openWorkspace(o, defaults);
        const result: PruneResult = { pruned: [], missing: [] };
        for (const r of o.refs) {
          if (!(await store.has(r))) result.missing.push(r);
          else if (!(await store.prune(r)).already) result.pruned.push(r);
        }
        return result;
      });
    },
  };
}
