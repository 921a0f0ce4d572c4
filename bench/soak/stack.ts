/**
 * The soak's stack: a Temporal dev server (its state in a db file, so a restart keeps every run) or an external
 * Temporal (`--temporal-address`), and the workers as child processes — the workflows (`--role workflows`), the CPU
 * activities (`--role activities`) and the GPU activities, as a production deployment runs them — each of which the
 * chaos driver may `kill -9` and start again. It knows at every moment what is up, which the status prober records
 * with every query.
 */
import { join } from 'node:path';
import { builtWorkerProgram, freePort, startDevServer, startWorkerProcess, type DevServer, type DevServerOptions, type WorkerProcess } from '../../src/runtime/dev-server.js';
import { SEARCH_ATTRIBUTES } from '../../src/loop/search-attributes.js';
import { processesMentioning } from '../../tests/support/processes.js';

/** What was up when something happened: a query needs the server and the workflow worker, not the activity workers. */
export type StackState = 'up' | 'server-down' | 'workflow-worker-down';

/** The niceness of the soak's batch workers (and the trainers and policy servers they start). */
export const BATCH_NICE = 10;

/** The soak's worker processes: the workflows, the CPU activities, the GPU activities. */
export type SoakWorker = 'workflows' | 'cpu' | 'gpu';

/** Options of {@link SoakStack.start}. */
export interface StackOptions {
  /** The soak's scratch directory: db file, logs, store, work dirs, the workers' TMPDIR. */
  dir: string;
  /** An external Temporal frontend; default: a dev server started here. */
  temporalAddress?: string;
  /** Extra environment of the workers (fault injection, API keys). */
  workerEnv: NodeJS.ProcessEnv;
  /** Where the workers put temporary files (checked for leftovers at the end). */
  tmpDir: string;
}

/** The dev server (or external address) and the two workers. */
export class SoakStack {
  server: DevServer | undefined;
  private serverOptions: DevServerOptions | undefined;
  private readonly workers = new Map<SoakWorker, WorkerProcess>();
  private serverDown = false;
  private workflowsDown = false;
  /** Seconds each restart took, by what was restarted. */
  readonly restarts: { what: string; ms: number }[] = [];

  private constructor(
    readonly options: StackOptions,
    readonly address: string,
  ) {}

  /** Starts the server (unless external) and the three workers. */
  static async start(options: StackOptions): Promise<SoakStack> {
    let server: DevServer | undefined;
    let serverOptions: DevServerOptions | undefined;
    if (options.temporalAddress === undefined) {
      serverOptions = { dbFilename: join(options.dir, 'temporal.db'), port: await freePort(), headless: true, searchAttributes: SEARCH_ATTRIBUTES, logFile: join(options.dir, 'temporal.log') };
      server = await startDevServer(serverOptions);
    }
    const stack = new SoakStack(options, server?.address ?? (options.temporalAddress as string));
    stack.server = server;
    stack.serverOptions = serverOptions;
    try {
      await Promise.all([stack.startWorker('workflows'), stack.startWorker('cpu'), stack.startWorker('gpu')]);
    } catch (err) {
      await stack.stop();
      throw err;
    }
    return stack;
  }

  /** Whether the server can be restarted here (a dev server this stack started). */
  get ownsServer(): boolean {
    return this.serverOptions !== undefined;
  }

  /** What is up now. */
  state(): StackState {
    if (this.serverDown) return 'server-down';
    if (this.workflowsDown) return 'workflow-worker-down';
    return 'up';
  }

  private async startWorker(which: SoakWorker): Promise<WorkerProcess> {
    const kind = which === 'gpu' ? 'gpu' : 'cpu';
    const w = await startWorkerProcess({
      kind,
      ...(which === 'gpu' ? {} : { role: which === 'workflows' ? 'workflows' : 'activities' }),
      // One host runs the control plane (the server, the workflows process) and the batch work (activities, the
      // trainers and policy servers the GPU worker starts): the batch work at nice 10, as a shared host should run it.
      ...(which === 'workflows' ? {} : { nice: BATCH_NICE }),
      program: builtWorkerProgram(kind), // the build's: a restarted worker loads the prebuilt workflow bundle
      address: this.address,
      store: join(this.options.dir, 'store'),
      logFile: join(this.options.dir, `${which}.log`),
      env: { ...process.env, ...this.options.workerEnv, TMPDIR: this.options.tmpDir },
      readyTimeoutMs: 300_000,
    });
    this.workers.set(which, w);
    return w;
  }

  /** `kill -9` of a worker process (its children notice through their lifelines), then a new one. */
  async killWorker(which: SoakWorker): Promise<string> {
    const w = this.workers.get(which);
    const pid = w?.pid;
    if (which === 'workflows') this.workflowsDown = true;
    await w?.kill();
    const started = Date.now();
    try {
      await this.startWorker(which);
    } finally {
      if (which === 'workflows') this.workflowsDown = false;
    }
    this.restarts.push({ what: `${which === 'workflows' ? 'workflow' : which} worker`, ms: Date.now() - started });
    return `pid ${String(pid)} killed, new worker ready in ${((Date.now() - started) / 1000).toFixed(1)} s`;
  }

  /** `kill -9` of the running trainer processes (not policy servers) of this soak; their pids, none when none ran. */
  killTrainers(): number[] {
    const pids = processesMentioning('gymflow_trainer', this.options.dir).filter((pid) => !processesMentioning('gymflow_trainer\0serve', this.options.dir).includes(pid));
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    return pids;
  }

  /** Stops the dev server (SIGTERM), waits `downMs`, starts it again on the same db file. */
  async restartServer(downMs: number): Promise<string> {
    if (!this.serverOptions) throw new Error('the soak does not own the Temporal server (--temporal-address): it cannot restart it');
    this.serverDown = true;
    try {
      const stopped = await this.server?.stop();
      await new Promise((r) => setTimeout(r, downMs));
      const started = Date.now();
      this.server = await startDevServer(this.serverOptions);
      this.restarts.push({ what: 'temporal dev server', ms: Date.now() - started });
      return `stopped (code ${String(stopped?.code)}), down ${(downMs / 1000).toFixed(1)} s, back in ${((Date.now() - started) / 1000).toFixed(1)} s`;
    } finally {
      this.serverDown = false;
    }
  }

  /** Stops the workers (graceful, then SIGKILL after the grace) and the server. */
  async stop(): Promise<void> {
    await Promise.all([...this.workers.values()].map((w) => w.stop(30_000)));
    this.workers.clear();
    await this.server?.stop();
  }
}
