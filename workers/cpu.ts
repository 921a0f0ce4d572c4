/**
 * The CPU worker: task queue `gymflow` — the pipeline workflows and the CPU activities (configuration
 * checks, tasks, rollouts, reward, export, evaluation).
 *
 *   node dist/workers/cpu.js [--address host:port] [--namespace ns] [--task-queue q] [--store dir]
 *     [--work-dir dir] [--shutdown-grace seconds] [--max-concurrent-activities n] [--role all|workflows|activities]
 *
 * `--role workflows` and `--role activities` split it in two processes on the same queue (docs/operations.md,
 * "Workflows in a process of their own"): queries answer from the workflow process whatever the activities do.
 *
 * SIGTERM/SIGINT shut it down gracefully: no new tasks, running activities get the grace period; sandbox
 * containers of activities still running after it are removed before the process exits.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkerOptions as SdkWorkerOptions } from '@temporalio/worker';
import { cpuActivities } from '../activities/index.js';
import { tolerateClosedOutput } from '../src/runtime/dev-server.js';
import { DEFAULT_TASK_QUEUES } from '../src/loop/config.js';
import { MODULE_EXT } from '../src/core/package-root.js';
import { FAULTS_ENV, installFaultsFromEnv } from '../src/core/faults.js';
import { removeOwnedSandboxes } from '../src/sandbox/lifetime.js';
import { DEFAULT_SHUTDOWN_GRACE_S, runGymflowWorker, workerOptionsOrExit, type WorkerOptions } from './worker.js';

export type { WorkerOptions } from './worker.js';

/** The workflows the CPU worker bundles: `workflows/index.js` of the build, or `index.ts` of the sources. */
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../workflows/index${MODULE_EXT}`, import.meta.url));

/**
 * The build's workflow bundle (scripts/bundle-workflows.mjs, written by scripts/build.sh beside the built workflows);
 * absent when the worker runs from the sources, which it then bundles at start.
 */
const WORKFLOW_BUNDLE = fileURLToPath(new URL('../workflows/bundle.js', import.meta.url));

/** The workflows to run: the build's prebuilt bundle when this worker is the build and it has one, else bundled now. */
function workflows(): Pick<SdkWorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  return MODULE_EXT === '.js' && existsSync(WORKFLOW_BUNDLE) ? { workflowBundle: { codePath: WORKFLOW_BUNDLE } } : { workflowsPath: WORKFLOWS_PATH };
}

/** Runs the CPU worker until it shuts down. */
export async function runWorker(options: WorkerOptions = {}): Promise<void> {
  const defaults = { store: options.store, workDir: options.workDir };
  const role = options.role ?? 'all';
  await runGymflowWorker(options, { taskQueue: DEFAULT_TASK_QUEUES.cpu, shutdownGraceMs: DEFAULT_SHUTDOWN_GRACE_S.cpu * 1000 }, () => ({
    ...(role === 'activities' ? {} : workflows()),
    ...(role === 'workflows' ? {} : { activities: cpuActivities(defaults) }),
    // A run's workflow tasks and queries go to the queue of the worker that has it cached ("sticky"). When that
    // worker was killed, the server waits this long for it before handing them to any worker (default 10 s: a status
    // query after a crash would time out). A process that runs only workflows takes its tasks within milliseconds,
    // so 2 s is ample; a process whose event loop the activities share keeps the SDK's default.
    ...(role === 'workflows' ? { stickyQueueScheduleToStartTimeout: '2s' } : {}),
  }));
}

async function main(): Promise<void> {
  tolerateClosedOutput(); // started by `gymflow dev`, which may be gone before this worker is
  // Test-only: the soak and the tests fail a share of sandbox execs on purpose (src/core/faults.ts).
  const faults = installFaultsFromEnv();
  if (faults) console.error(`gymflow worker: TEST-ONLY fault injection is on (${FAULTS_ENV}): ${JSON.stringify(faults)}`);
  try {
    await runWorker(workerOptionsOrExit('cpu', process.argv.slice(2)));
  } finally {
    // Rollouts still running past the shutdown grace were abandoned: their sandbox containers go with the worker.
    const { removed } = await removeOwnedSandboxes();
    if (removed.length > 0) console.error(`gymflow worker: removed ${removed.length} sandbox container(s) left by abandoned activities`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
