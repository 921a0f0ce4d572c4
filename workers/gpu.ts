/**
 * The GPU worker: task queue `gymflow-gpu` — trainer configuration checks, the initial policy, training
 * (the Python trainer as a child process group) and the ONNX export of trained policies. Run it on the GPU
 * host; it needs the trainer's Python environment (`.venv`, or `$GYMFLOW_PYTHON`).
 *
 *   node dist/workers/gpu.js [--address host:port] [--namespace ns] [--task-queue q] [--store dir]
 *     [--work-dir dir] [--shutdown-grace seconds]
 *
 * SIGTERM/SIGINT shut it down gracefully: a running training gets the grace period (default 60 s) to
 * finish, then is cancelled — its process group gets SIGTERM, the trainer exits with its last checkpoint
 * on disk, and the retry on another worker resumes from the checkpoint in the heartbeat details.
 */
import { pathToFileURL } from 'node:url';
import { gpuActivities } from '../activities/index.js';
import { tolerateClosedOutput } from '../src/runtime/dev-server.js';
import { DEFAULT_TASK_QUEUES } from '../src/loop/config.js';
import { DEFAULT_SHUTDOWN_GRACE_S, runGymflowWorker, workerOptionsOrExit, type WorkerOptions } from './worker.js';
import { defined } from '../src/core/defined.js';

export type { WorkerOptions } from './worker.js';

/** Runs the GPU worker until it shuts down. */
export async function runWorker(options: WorkerOptions = {}): Promise<void> {
  const defaults = { store: options.store, workDir: options.workDir, ...defined({ killGraceMs: options.killGraceMs }) };
  await runGymflowWorker(options, { taskQueue: DEFAULT_TASK_QUEUES.gpu, shutdownGraceMs: DEFAULT_SHUTDOWN_GRACE_S.gpu * 1000 }, () => ({
    activities: gpuActivities(defaults),
  }));
}

async function main(): Promise<void> {
  tolerateClosedOutput(); // started by `gymflow dev`, which may be gone before this worker is
  await runWorker(workerOptionsOrExit('gpu', process.argv.slice(2)));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
