/**
 * gymflow's workers for a deployment of one's own (`gymflow/worker`): the CPU worker (the pipeline workflows
 * and the CPU activities) and the GPU worker (training), the options and command line they share, and the
 * activities each task queue runs, for a worker built by hand (`workflowsPath: WORKFLOWS_PATH`).
 */
export { runWorker as runCpuWorker, WORKFLOWS_PATH } from './cpu.js';
export { runWorker as runGpuWorker } from './gpu.js';
export { parseWorkerArgs, runGymflowWorker, workerAddress, type WorkerOptions } from './worker.js';
export * from '../activities/index.js';
