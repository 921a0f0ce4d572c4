/**
 * The real stack of the loop's crash tests (`tests/pipeline-durability.test.ts`, `tests/pipeline-async.test.ts`): a
 * dev server on a db file of its own, the CPU and GPU workers as processes of the build (a restarted worker is
 * ready in seconds), and a client; everything under one scratch directory, which `stop` removes after checking that
 * no trainer outlived the test. Also what those tests read back: `pipeline_status`, the `train` activity's results
 * from the workflow's history, the newest complete checkpoint under a run directory.
 */
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TrainResult } from '../../activities/train.js';
import { SEARCH_ATTRIBUTES } from '../../src/loop/search-attributes.js';
import type { PipelineStatus } from '../../src/loop/status.js';
import { builtWorkerProgram, freePort, startDevServer, type DevServer, type DevServerOptions, startWorkerProcess, type WorkerProcess } from '../../src/runtime/dev-server.js';
import { pipelineStatusQuery } from '../../workflows/messages.js';
import { processesMentioning } from './processes.js';
import { defined } from '../../src/core/defined.js';

export interface WorkerStackOptions {
  /** Extra environment of the CPU worker (e.g. `OPENAI_API_KEY` for `openai:` agents on a loopback server). */
  readonly cpuEnv?: NodeJS.ProcessEnv;
}

export class WorkerStack {
  server: DevServer;
  cpu: WorkerProcess | undefined;
  gpu: WorkerProcess | undefined;
  private connection: Connection | undefined;
  client: Client;

  private constructor(
    /** The scratch directory: the server's db and log, the store (`store/`), the workers' logs. */
    readonly dir: string,
    private readonly serverOptions: DevServerOptions,
    private readonly options: WorkerStackOptions,
    server: DevServer,
    connection: Connection,
  ) {
    this.server = server;
    this.connection = connection;
    this.client = new Client({ connection });
  }

  /** Starts the server and both workers in a new scratch directory named after `prefix`. */
  static async start(prefix: string, options: WorkerStackOptions = {}): Promise<WorkerStack> {
    const dir = await mkdtemp(join(tmpdir(), `gymflow-${prefix}-`));
    const serverOptions: DevServerOptions = { dbFilename: join(dir, 'temporal.db'), port: await freePort(), headless: true, searchAttributes: SEARCH_ATTRIBUTES, logFile: join(dir, 'temporal.log') };
    const server = await startDevServer(serverOptions);
    const stack = new WorkerStack(dir, serverOptions, options, server, await Connection.connect({ address: server.address }));
    [stack.cpu, stack.gpu] = await Promise.all([stack.startCpu(), stack.startGpu()]);
    return stack;
  }

  /** The store every worker shares. */
  get store(): string {
    return join(this.dir, 'store');
  }

  /** A new CPU worker (the one before it killed or stopped by the caller). */
  startCpu(): Promise<WorkerProcess> {
    const env = this.options.cpuEnv === undefined ? undefined : { ...process.env, ...this.options.cpuEnv };
    return startWorkerProcess({ kind: 'cpu', program: builtWorkerProgram('cpu'), address: this.server.address, store: this.store, logFile: join(this.dir, 'cpu.log'), ...defined({ env }) });
  }

  /** A new GPU worker (the one before it killed or stopped by the caller). */
  startGpu(): Promise<WorkerProcess> {
    return startWorkerProcess({ kind: 'gpu', program: builtWorkerProgram('gpu'), address: this.server.address, store: this.store, logFile: join(this.dir, 'gpu.log') });
  }

  /** Stops the server (it must exit 0), waits `downMs`, starts it again on the same db file and reconnects. */
  async restartServer(downMs: number): Promise<void> {
    await this.connection?.close();
    this.connection = undefined;
    const stopped = await this.server.stop();
    if (stopped.code !== 0) throw new Error(`the dev server exited with ${String(stopped.code)} when stopped (log: ${join(this.dir, 'temporal.log')})`);
    await new Promise((r) => setTimeout(r, downMs));
    this.server = await startDevServer(this.serverOptions);
    this.connection = await Connection.connect({ address: this.server.address });
    this.client = new Client({ connection: this.connection });
  }

  /** Loop `id`'s `pipeline_status`. */
  statusOf(id: string): Promise<PipelineStatus> {
    return this.client.workflow.getHandle(id).query(pipelineStatusQuery);
  }

  /**
   * The `train` activity results of every run of loop `id` (continued-as-new ones too), in the order they completed,
   * read from the histories rather than the store: a checkpoint's store entry (content-addressed) is the one of the
   * first run that produced the same weights.
   */
  async trainResults(id: string): Promise<TrainResult[]> {
    const runs: string[] = [];
    for await (const e of this.client.workflow.list({ query: `WorkflowId = "${id}"` })) runs.push(e.runId);
    const results: { at: number; r: TrainResult }[] = [];
    for (const runId of runs) {
      const history = await this.client.workflow.getHandle(id, runId).fetchHistory();
      const types = new Map<string, string>();
      for (const e of history.events ?? []) {
        const scheduled = e.activityTaskScheduledEventAttributes;
        if (scheduled) types.set(String(e.eventId), scheduled.activityType?.name ?? '');
        const completed = e.activityTaskCompletedEventAttributes;
        if (completed && types.get(String(completed.scheduledEventId)) === 'train') {
          const payload = completed.result?.payloads?.[0];
          if (payload) results.push({ at: Number(e.eventTime?.seconds ?? 0), r: defaultPayloadConverter.fromPayload<TrainResult>(payload) });
        }
      }
    }
    return results.sort((a, b) => a.at - b.at).map((x) => x.r);
  }

  /**
   * Stops the workers and the server, kills any trainer still running under the scratch directory and removes it
   * (`GYMFLOW_KEEP_TEST_DIR=1` keeps it, with the workers' and server's logs and the trainer runs, for a
   * post-mortem). Returns the trainers it had to kill: a test expects none.
   */
  async stop(): Promise<number[]> {
    await this.connection?.close();
    await Promise.all([this.cpu?.stop(20_000), this.gpu?.stop(20_000)]);
    await this.server.stop();
    const left = processesMentioning('gymflow_trainer', this.dir);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    if (process.env['GYMFLOW_KEEP_TEST_DIR']) console.warn(`kept ${this.dir}`);
    else await rm(this.dir, { recursive: true, force: true });
    return left;
  }
}

/** The highest step of a complete `checkpoint-<step>` directory (it holds `trainer_state.pt`) under `root`, if ≥ `min`. */
export function newestCheckpoint(root: string, min: number): number | undefined {
  let best: number | undefined;
  const walk = (d: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const m = /^checkpoint-(\d+)$/.exec(e.name);
      if (m && readdirSync(join(d, e.name)).includes('trainer_state.pt')) {
        const step = Number(m[1]);
        if (step >= min && (best === undefined || step > best)) best = step;
      } else walk(join(d, e.name));
    }
  };
  walk(root);
  return best;
}
