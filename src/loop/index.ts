/**
 * The loop's decisions, workflow-safe: the pipeline configuration's schema and defaults, the plan of each
 * iteration, the status and its metrics, the search attributes, continuation and forks. Pure and deterministic: the
 * workflows import these, so nothing here touches Node built-ins, files or processes (`src/runtime` does).
 */
export * from './config.js';
export * from './continuation.js';
export * from './fork.js';
export * from './plan.js';
export * from './search-attributes.js';
export * from './status.js';
export * from './summaries.js';
