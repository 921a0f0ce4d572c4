/**
 * What the CPU and GPU workers share: connecting, creating the worker with a shutdown grace period, the
 * ready line, and the command line (`--address`, `--namespace`, `--task-queue`, `--store`, `--work-dir`, the CPU
 * worker's `--role`).
 */
import { parseArgs } from 'node:util';
import { NativeConnection, Worker, type WorkerOptions as SdkWorkerOptions } from '@temporalio/worker';
import { defined } from '../src/core/defined.js';
import { DEFAULT_TASK_QUEUES } from '../src/loop/config.js';
import { WORKER_ROLES, type WorkerRole } from '../src/runtime/dev-server.js';
import { connectionOptions, temporalTarget } from '../src/runtime/temporal-target.js';

/** Options of a gymflow worker. */
export interface WorkerOptions {
  /**
   * Temporal frontend `host:port` (default `$TEMPORAL_ADDRESS`, else 127.0.0.1:7233). Ignored with `connection`;
   * TLS and an API key come from the environment (src/runtime/temporal-target.ts).
   */
  address?: string;
  /** Namespace (default `$TEMPORAL_NAMESPACE`, else `default`). */
  namespace?: string;
  /** Task queue to poll (default: `gymflow` for the CPU worker, `gymflow-gpu` for the GPU worker). */
  taskQueue?: string;
  /** Artifact store root used when a pipeline configuration names none. */
  store?: string;
  /** Scratch directory for trainer runs and checkouts (default: beside the store). */
  workDir?: string;
  /** An open connection to use (tests); the worker does not close it. */
  connection?: NativeConnection;
  /**
   * How long running activities may go on after shutdown starts (SIGTERM/SIGINT or `signal`) before they are
   * cancelled (default 30 s CPU, 60 s GPU: a trainer gets to finish its step and checkpoint).
   */
  shutdownGraceMs?: number;
  /** Aborting it shuts the worker down gracefully (programs use SIGTERM/SIGINT, handled by the SDK runtime). */
  signal?: AbortSignal;
  /** Activities run at once (default: the SDK's). */
  maxConcurrentActivities?: number;
  /** Grace between SIGTERM and SIGKILL of a cancelled trainer's process group (GPU worker). */
  killGraceMs?: number;
  /** Where the ready line goes (default console.log). */
  log?: (line: string) => void;
  /**
   * What the CPU worker polls for (`--role`): `all` (default) the workflows and the CPU activities; `workflows`
   * only the workflows (and so the queries: `pipeline_status`); `activities` only the activities. Running the
   * workflows in a process of their own keeps a query's answer from waiting behind an activity that holds the
   * event loop (an in-process evaluation, scoring a large set), and a crashed activity worker costs them no replay.
   */
  role?: WorkerRole;
}


/** The resolved address: option, `$TEMPORAL_ADDRESS`, 127.0.0.1:7233. */
export function workerAddress(options: Pick<WorkerOptions, 'address'>): string {
  return options.address ?? process.env['TEMPORAL_ADDRESS'] ?? '127.0.0.1:7233';
}

/** Creates and runs a worker until it shuts down; closes the connection it opened. */
export async function runGymflowWorker(
  options: WorkerOptions,
  defaults: { taskQueue: string; shutdownGraceMs: number },
  build: (taskQueue: string) => Pick<SdkWorkerOptions, 'activities' | 'workflowsPath' | 'workflowBundle' | 'stickyQueueScheduleToStartTimeout'>,
): Promise<void> {
  const target = temporalTarget(options);
  const address = target.address;
  const taskQueue = options.taskQueue ?? defaults.taskQueue;
  const connection = options.connection ?? (await NativeConnection.connect(connectionOptions(target)));
  try {
    const worker = await Worker.create({
      connection,
      namespace: target.namespace,
      taskQueue,
      shutdownGraceTime: options.shutdownGraceMs ?? defaults.shutdownGraceMs,
      // Heartbeats carry cancellations back: at the SDK default (up to 60 s between heartbeat RPCs) a
      // cancelled training would run on for a minute. Every 5 s is still negligible load.
      maxHeartbeatThrottleInterval: '5 seconds',
      defaultHeartbeatThrottleInterval: '5 seconds',
      ...defined({ maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities }),
      ...build(taskQueue),
    });
    const stop = (): void => worker.shutdown();
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener('abort', stop, { once: true });
    const role = options.role === undefined || options.role === 'all' ? '' : ` role=${options.role}`;
    (options.log ?? console.log)(`gymflow worker ready: queue=${taskQueue}${role} address=${options.connection ? 'connection' : address}`);
    try {
      await worker.run();
    } finally {
      options.signal?.removeEventListener('abort', stop);
    }
  } finally {
    if (!options.connection) await connection.close();
  }
}

/** Seconds running activities may go on after SIGTERM, by worker: a trainer gets longer to finish its step and checkpoint. */
export const DEFAULT_SHUTDOWN_GRACE_S = { cpu: 30, gpu: 60 } as const;

/** A worker's `--help`: its command line and where each default comes from. */
export function workerUsage(worker: 'cpu' | 'gpu'): string {
  const queue = DEFAULT_TASK_QUEUES[worker];
  const grace = DEFAULT_SHUTDOWN_GRACE_S[worker];
  return [
    `usage: node dist/workers/${worker}.js [options]`,
    '',
    '  --address HOST:PORT               Temporal frontend (default $TEMPORAL_ADDRESS, else 127.0.0.1:7233)',
    '  --namespace NAME                  Temporal namespace (default $TEMPORAL_NAMESPACE, else default)',
    `  --task-queue NAME                 the queue to poll (default ${queue})`,
    '  --store DIR|s3://BUCKET/PREFIX    artifact store when a pipeline names none (default $GYMFLOW_STORE, else .gymflow/store)',
    '  --work-dir DIR                    scratch for trainer runs and checkouts (default beside the store)',
    `  --shutdown-grace SECONDS          how long running activities may go on after SIGTERM (default ${grace})`,
    "  --max-concurrent-activities N     activities at once (default the SDK's)",
    ...(worker === 'cpu' ? ['  --role all|workflows|activities   what this process runs (default all)'] : []),
    '  --help                            this text',
    '',
    'TLS, mTLS and API keys come from TEMPORAL_TLS*, TEMPORAL_API_KEY (docs/operations.md).',
  ].join('\n');
}

/**
 * A worker's command line from `main`: the options, or (`--help`) its usage on stdout and exit 0, or a line naming
 * what is wrong with the arguments and the usage on stderr and exit 2.
 */
export function workerOptionsOrExit(worker: 'cpu' | 'gpu', argv: readonly string[]): WorkerOptions {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(workerUsage(worker));
    process.exit(0);
  }
  try {
    const options = parseWorkerArgs(argv);
    if (worker === 'gpu' && options.role !== undefined) throw new Error(`--role is the CPU worker's option (the GPU worker runs activities only), got '--role ${options.role}'`);
    return options;
  } catch (err) {
    console.error(`gymflow ${worker} worker: ${err instanceof Error ? err.message : String(err)}\n\n${workerUsage(worker)}`);
    process.exit(2);
  }
}

/** Parses a worker's command line into options; throws an error naming the argument that is wrong. */
export function parseWorkerArgs(argv: readonly string[]): WorkerOptions {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      address: { type: 'string' },
      namespace: { type: 'string' },
      'task-queue': { type: 'string' },
      store: { type: 'string' },
      'work-dir': { type: 'string' },
      'shutdown-grace': { type: 'string' },
      'max-concurrent-activities': { type: 'string' },
      role: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new Error(`unexpected argument '${positionals[0] as string}': a worker takes options only`);
  const int = (v: string | undefined, name: string): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got '${v}'`);
    return n;
  };
  const grace = int(values['shutdown-grace'], 'shutdown-grace');
  const maxActivities = int(values['max-concurrent-activities'], 'max-concurrent-activities');
  const role = values.role;
  if (role !== undefined && !(WORKER_ROLES as readonly string[]).includes(role)) throw new Error(`--role must be one of ${WORKER_ROLES.join(', ')}, got '${role}'`);
  return {
    ...defined({
      address: values.address,
      namespace: values.namespace,
      taskQueue: values['task-queue'],
      store: values.store,
      workDir: values['work-dir'],
      shutdownGraceMs: grace === undefined ? undefined : grace * 1000,
      maxConcurrentActivities: maxActivities,
      role: role as WorkerRole | undefined,
    }),
  };
}
