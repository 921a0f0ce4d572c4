import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * The custom search attributes of gymflow's workflows (the contract in docs/pipeline.md): the experiment,
 * environment, algorithm, iteration and best held-out success of a `trainingLoop`, so the Web UI and
 * `temporal workflow list --query 'GymflowExperiment = "demo"'` can find and sort runs.
 *
 * They must be registered on the namespace before a workflow sets them: `gymflow dev` starts the dev server
 * with `--search-attribute Name=Type` for each; on a cluster, `temporal operator search-attribute create`.
 * Pure module: imported by workflows too.
 */

/** Kinds as the Temporal CLI spells them (`--search-attribute Name=Keyword`). */
export type SearchAttributeCliType = 'Keyword' | 'Int' | 'Double' | 'Text' | 'Bool' | 'Datetime';

/** Every custom search attribute gymflow sets, with its CLI type. */
export const SEARCH_ATTRIBUTES: readonly { readonly name: string; readonly type: SearchAttributeCliType }[] = [
  { name: 'GymflowExperiment', type: 'Keyword' },
  { name: 'GymflowEnv', type: 'Keyword' },
  { name: 'GymflowAlgorithm', type: 'Keyword' },
  { name: 'GymflowIteration', type: 'Int' },
  { name: 'GymflowBestSuccess', type: 'Double' },
] as const;

/** Typed keys for `upsertSearchAttributes` / `typedSearchAttributes`. */
export const SearchAttributeKeys = {
  experiment: defineSearchAttributeKey('GymflowExperiment', SearchAttributeType.KEYWORD),
  env: defineSearchAttributeKey('GymflowEnv', SearchAttributeType.KEYWORD),
  algorithm: defineSearchAttributeKey('GymflowAlgorithm', SearchAttributeType.KEYWORD),
  iteration: defineSearchAttributeKey('GymflowIteration', SearchAttributeType.INT),
  bestSuccess: defineSearchAttributeKey('GymflowBestSuccess', SearchAttributeType.DOUBLE),
} as const;
