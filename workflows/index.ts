/** gymflow's pipeline workflows (the bundle the workers load) and their messages. */
export { pipeline, type PassInput, type PassResult } from './pipeline.js';
export { trainingLoop, type LoopResult } from './training-loop.js';
export * from './messages.js';
export { ingest } from './ingest.js';
