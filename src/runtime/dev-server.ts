/**
 * The local dev stack as child processes: a Temporal dev server (`temporal server start-dev`, SQLite file, Web
 * UI) and the gymflow workers (`workers/cpu.ts`, `workers/gpu.ts`). `gymflow dev` composes them; the
 * durability tests use them directly so they can stop, restart and `kill -9` each part.
 *
 * Every child runs in its own process group (`detached`), so a Ctrl-C in the terminal reaches only
 * `gymflow dev`, which then stops the workers first (letting them finish or hand back their activities) and
 * the server last. On Linux every child also gets SIGTERM from the kernel when the process that started it dies,
 * `kill -9` included ({@link parentDeathPrefix}), so none outlives `gymflow dev` holding its ports.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ConfigError, GymflowError } from '../core/errors.js';
import { MODULE_EXT, PACKAGE_ROOT } from '../core/package-root.js';
import { isErrno, processAlive } from '../core/fs.js';
import { requireTemporalBinary, runTemporal, searchAttributeFlags, type SearchAttributeSpec } from './temporal-cli.js';
import { defined } from '../core/defined.js';

/** How a child process ended. */
export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A child that failed to start or become ready; the message names it and ends with its last output lines. */
export class ProcessStartError extends GymflowError {
  constructor(message: string) {
    super('PROCESS_START_ERROR', message);
  }
}

/**
 * Resolves when `port` on `host` can be bound (i.e. nobody listens there); otherwise throws a
 * {@link ConfigError} that names the port, what it was meant for and the option that changes it.
 */
export async function ensurePortFree(host: string, port: number, what: string): Promise<void> {
  const problem = await new Promise<string | undefined>((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
  if (problem === 'EADDRINUSE') {
    throw new ConfigError(`${what}: port ${port} on ${host} is already in use (another Temporal dev server or \`gymflow dev\`?); stop it or choose another port`);
  }
  if (problem !== undefined) throw new ConfigError(`${what}: cannot bind port ${port} on ${host}: ${problem}`);
}

/** A TCP port that was free a moment ago on `host` (another process may take it before the caller binds). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`could not read the port of a listening socket: ${String(address)}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** Keeps the last `max` lines of a child's output for error messages. */
class Tail {
  private readonly lines: string[] = [];
  constructor(private readonly max = 15) {}
  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.max) this.lines.shift();
  }
  toString(): string {
    return this.lines.length === 0 ? '(no output)' : this.lines.join('\n');
  }
}

/**
 * A spawned child in its own process group, its output line by line to `onLine` and an optional log file.
 */
class ManagedChild {
  readonly exited: Promise<ExitStatus>;
  readonly tail = new Tail();
  private status: ExitStatus | undefined;

  constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    onLine: ((line: string) => void) | undefined,
    log: WriteStream | undefined,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.status = { code, signal };
        resolve(this.status);
      });
      child.once('error', (err) => {
        this.tail.push(`spawn error: ${err.message}`);
        this.status = { code: null, signal: null };
        resolve(this.status);
      });
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        this.tail.push(line);
        log?.write(`${line}\n`);
        onLine?.(line);
      });
    }
    void this.exited.then(() => log?.end());
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new ProcessStartError(`${this.name}: no pid (spawn failed: ${this.tail.toString()})`);
    return this.child.pid;
  }

  /** Whether the process has exited. */
  get running(): boolean {
    return this.status === undefined;
  }

  /** Sends `signal` to the whole process group (the child and whatever it spawned). */
  signalGroup(signal: NodeJS.Signals): void {
    if (!this.running || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch (err) {
      if (!isErrno(err, 'ESRCH')) throw err;
    }
  }

  /** Sends `signal` to the child alone (its own children, e.g. a trainer, are not signalled). */
  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** SIGTERM (to the child), then SIGKILL to its group after `graceMs`; resolves with how it ended. */
  async stop(graceMs: number): Promise<ExitStatus> {
    if (!this.running) return this.exited;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signalGroup('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

let outputTolerated = false;

/**
 * Keeps this process running when its stdout or stderr is a pipe whose reader is gone or a terminal that was
 * closed (EPIPE, EIO): a worker whose `gymflow dev` was killed then still shuts down gracefully on the SIGTERM
 * it gets, instead of dying of an unhandled stream error at its next log line. The log file, written by the
 * parent, is lost either way; other stream errors stay fatal.
 */
export function tolerateClosedOutput(): void {
  if (outputTolerated) return;
  outputTolerated = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'EIO') return;
      throw err;
    });
  }
}

let parentDeath: readonly string[] | undefined;

/**
 * The command prefix that makes the kernel send a child SIGTERM when this process dies: util-linux's
 * `setpriv --pdeathsig TERM --`, which sets the signal and `exec`s the command (same pid, same process group).
 * A child in a process group of its own gets no Ctrl-C and no SIGHUP from the terminal, so without it a
 * `gymflow dev` killed with -9, or by the OOM killer, left the dev server and both workers running, holding the
 * ports (the next `gymflow dev` refused to start) and the GPU worker's trainers. SIGTERM stops each of them
 * gracefully; a worker's trainers then stop through their own lifeline. Empty where `setpriv` is missing (not
 * Linux): the children then outlive a killed parent. The kernel sends the signal when the *thread* that spawned
 * the child exits; Node spawns on the event loop's thread, so that is when the process exits.
 */
export function parentDeathPrefix(): readonly string[] {
  if (parentDeath === undefined) {
    const probe = spawnSync('setpriv', ['--pdeathsig', 'TERM', '--', 'true'], { stdio: 'ignore', timeout: 10_000 });
    parentDeath = probe.status === 0 ? ['setpriv', '--pdeathsig', 'TERM', '--'] : [];
  }
  return parentDeath;
}

function spawnManaged(
  name: string,
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; onLine?: (line: string) => void; logFile?: string },
): ManagedChild {
  let log: WriteStream | undefined;
  if (options.logFile !== undefined) {
    mkdirSync(dirname(options.logFile), { recursive: true });
    log = createWriteStream(options.logFile, { flags: 'a' });
  }
  const [wrapper, ...wrapperArgs] = parentDeathPrefix();
  const child = spawn(wrapper ?? command, wrapper === undefined ? args : [...wrapperArgs, command, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    cwd: options.cwd,
  });
  return new ManagedChild(name, child, options.onLine, log);
}

/**
 * A write-ahead log with `synchronous=normal`: a committed transaction survives the server being killed
 * (only an OS crash or power loss may lose the last few), and every workflow or activity round trip is
 * 2-3x faster than with the rollback journal the CLI uses by default (measured with
 * `bench/orchestration.ts`: 4 activities' workflow 280 ms → 110 ms on 2 cores).
 */
export const DEFAULT_SQLITE_PRAGMAS: readonly string[] = ['journal_mode=wal', 'synchronous=normal'];

/**
 * The dev server's dynamic configuration:
 * - eager activity execution: a worker that completes a workflow task gets the activities it just scheduled
 *   on its own task queue in the same response, without another poll round trip (the SDK asks for it by
 *   default; the server only grants it behind this flag);
 * - the transfer queue read rate: tasks for workers (a workflow task after an activity completes, a signal)
 *   leave the history service through its transfer queue, which the server reads at most 20 times a second
 *   per shard by default. The dev server has one shard, so once the limiter's burst is spent every such task
 *   waited ~35 ms before a worker could get it (measured from workflow histories: 1-2 ms with this setting,
 *   ~35 ms without, in a workflow of 10 sequential activities).
 */
export const DEFAULT_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'system.enableActivityEagerExecution': true,
  'history.transferProcessorMaxPollRPS': 1000,
};

/** Options of {@link startDevServer}. */
export interface DevServerOptions {
  /** SQLite file of the server's state; runs survive a restart with the same file. Its folder is created. */
  dbFilename: string;
  /** IP the gRPC frontend (and the UI) bind to. Default `127.0.0.1`. */
  ip?: string;
  /** gRPC frontend port. Default 7233. */
  port?: number;
  /** Web UI port. Default `port + 1000`. Ignored when `headless`. */
  uiPort?: number;
  /** No Web UI. */
  headless?: boolean;
  /** Registered at start, and created afterwards when the db file predates them. */
  searchAttributes?: readonly SearchAttributeSpec[];
  /** Namespace the search attributes go into. Default `default`. */
  namespace?: string;
  /** Server output goes here (appended). Default: kept in memory only (the last lines show up in errors). */
  logFile?: string;
  /**
   * SQLite pragmas passed as `--sqlite-pragma`. Default {@link DEFAULT_SQLITE_PRAGMAS}; `[]` keeps the CLI's
   * own defaults.
   */
  sqlitePragmas?: readonly string[];
  /**
   * Dynamic configuration values (`--dynamic-config-value KEY=JSON`). Default {@link DEFAULT_DYNAMIC_CONFIG};
   * the given keys are added to (or override) the default ones.
   */
  dynamicConfig?: Readonly<Record<string, unknown>>;
  /** Server log level. Default `warn`. */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** The `temporal` CLI. Default {@link requireTemporalBinary}. */
  binary?: string;
  /** How long to wait for the frontend to answer. Default 60 s. */
  readyTimeoutMs?: number;
}

/** What a started child process (the dev server, a worker) offers besides its own controls. */
abstract class ChildHandle {
  constructor(protected readonly child: ManagedChild) {}

  /** The process id. */
  get pid(): number {
    return this.child.pid;
  }

  /** Resolves when the process exits, for whatever reason. */
  get exited(): Promise<ExitStatus> {
    return this.child.exited;
  }

  /** Whether the process is still running. */
  get running(): boolean {
    return this.child.running;
  }

  /** The last lines the process printed. */
  lastOutput(): string {
    return this.child.tail.toString();
  }
}

/**
 * A running `temporal server start-dev`. Stop it with {@link DevServer.stop} (graceful) or
 * {@link DevServer.kill} (a crash); start it again with {@link startDevServer} and the same options to get
 * the same state back from the db file.
 */
export class DevServer extends ChildHandle {
  /** `host:port` of the gRPC frontend, for clients and workers. */
  readonly address: string;
  /** The Web UI's URL, `undefined` when headless. */
  readonly uiUrl: string | undefined;

  /** @internal use {@link startDevServer} */
  constructor(
    child: ManagedChild,
    readonly options: Readonly<DevServerOptions>,
  ) {
    super(child);
    const ip = options.ip ?? '127.0.0.1';
    const port = options.port ?? 7233;
    this.address = `${ip}:${port}`;
    this.uiUrl = options.headless ? undefined : `http://${ip === '0.0.0.0' ? 'localhost' : ip}:${options.uiPort ?? port + 1000}`;
  }

  /** SIGTERM, then SIGKILL after `graceMs` (default 10 s). The db file keeps everything committed. */
  stop(graceMs = 10_000): Promise<ExitStatus> {
    return this.child.stop(graceMs);
  }

  /** SIGKILL: the server dies as in a crash. */
  async kill(): Promise<ExitStatus> {
    this.child.signalGroup('SIGKILL');
    return this.child.exited;
  }
}

/**
 * Creates the search attributes of `wanted` that the namespace lacks (a db file made before an attribute
 * existed does not get it from `start-dev --search-attribute`). Throws when one exists with another type.
 */
export async function ensureSearchAttributes(
  address: string,
  wanted: readonly SearchAttributeSpec[],
  options: { namespace?: string; binary?: string } = {},
): Promise<void> {
  if (wanted.length === 0) return;
  const namespace = options.namespace ?? 'default';
  const common = ['--address', address, '--namespace', namespace];
  const binary = options.binary ?? requireTemporalBinary();
  const listed = await runTemporal(['operator', 'search-attribute', 'list', ...common, '--output', 'json'], { binary });
  const custom = (JSON.parse(listed.stdout) as { customAttributes?: Record<string, string> }).customAttributes ?? {};
  for (const attribute of wanted) {
    const have = custom[attribute.name];
    const expected = `INDEXED_VALUE_TYPE_${attribute.type.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`;
    if (have === undefined) {
      await runTemporal(['operator', 'search-attribute', 'create', ...common, '--name', attribute.name, '--type', attribute.type], { binary });
    } else if (have !== expected) {
      throw new ConfigError(`search attribute ${attribute.name} exists in namespace ${namespace} as ${have}, expected ${attribute.type}: use another db file`);
    }
  }
}

async function waitUntilServing(server: DevServer, binary: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!server.running) {
      const status = await server.exited;
      throw new ProcessStartError(
        `temporal dev server on ${server.address} exited during start-up (code ${String(status.code)}, signal ${String(status.signal)}):\n${server.lastOutput()}`,
      );
    }
    const probe = await runTemporal(['operator', 'cluster', 'health', '--address', server.address], { binary, check: false, timeoutMs: 10_000 });
    if (probe.code === 0) return;
    last = (probe.stderr || probe.stdout).trim();
    await new Promise((r) => setTimeout(r, 250));
  }
  await server.kill();
  throw new ProcessStartError(`temporal dev server on ${server.address} did not answer within ${timeoutMs} ms (${last}):\n${server.lastOutput()}`);
}

/**
 * Starts `temporal server start-dev` and resolves once its frontend answers and the search attributes exist.
 * Refuses (before spawning) when the gRPC or UI port is taken.
 *
 * @example
 * ```ts
 * const server = await startDevServer({ dbFilename: '.gymflow/temporal.db', searchAttributes: SEARCH_ATTRIBUTES });
 * console.log(server.address, server.uiUrl);
 * await server.stop();
 * ```
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const binary = options.binary ?? requireTemporalBinary();
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port ?? 7233;
  const uiPort = options.uiPort ?? port + 1000;
  await ensurePortFree(ip, port, 'Temporal gRPC frontend (--port)');
  if (!options.headless) await ensurePortFree(ip, uiPort, 'Temporal Web UI (--ui-port)');
  mkdirSync(dirname(options.dbFilename), { recursive: true });
  const releaseDb = claimDatabase(options.dbFilename);

  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(port),
    '--db-filename',
    options.dbFilename,
    '--log-level',
    options.logLevel ?? 'warn',
    ...(options.headless ? ['--headless'] : ['--ui-port', String(uiPort), '--ui-disable-news-fetch']),
    ...(options.sqlitePragmas ?? DEFAULT_SQLITE_PRAGMAS).flatMap((p) => ['--sqlite-pragma', p]),
    ...Object.entries({ ...DEFAULT_DYNAMIC_CONFIG, ...options.dynamicConfig }).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${JSON.stringify(v)}`]),
    ...searchAttributeFlags(options.searchAttributes ?? []),
  ];
  let child: ManagedChild;
  try {
    child = spawnManaged('temporal dev server', binary, args, defined({ logFile: options.logFile }));
  } catch (err) {
    releaseDb();
    throw err;
  }
  void child.exited.then(releaseDb);
  const server = new DevServer(child, { ...options, ip, port, uiPort });
  await waitUntilServing(server, binary, options.readyTimeoutMs ?? 60_000);
  await ensureSearchAttributes(server.address, options.searchAttributes ?? [], {
    binary,
    ...defined({ namespace: options.namespace }),
  });
  return server;
}

/**
 * Claims a dev server's database file, so that two servers never share one: they would fight over its
 * shards (`Shard is owned by …`, `Failed to update shard`, aborted starts). The claim is `<db>.lock` holding
 * the pid of the process that started the server; a claim whose process is gone (killed with -9) is taken
 * over. Returns the release, which the server's exit calls.
 *
 * @throws ConfigError when a live process holds the claim.
 */
export function claimDatabase(db: string): () => void {
  const lock = `${db}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(lock, { force: true });
      };
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw new ConfigError(`cannot claim the database ${db}: ${(err as Error).message}`);
      const holder = Number(readFileSync(lock, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
        throw new ConfigError(`the database ${db} is in use by another Temporal dev server (started by pid ${holder}): give this one another --db, or stop that one`);
      }
      rmSync(lock, { force: true });
    }
  }
  throw new ConfigError(`cannot claim the database ${db}: ${lock} keeps coming back`);
}

/** Which worker program: `workers/cpu.ts` (task queue `gymflow`) or `workers/gpu.ts` (`gymflow-gpu`). */
export type WorkerKind = 'cpu' | 'gpu';

/**
 * What a CPU worker process polls for (`--role`): `all` the workflows and the CPU activities, or one of the two, so
 * that queries are answered by a process no activity keeps busy (workers/worker.ts, `WorkerOptions.role`).
 */
export type WorkerRole = 'all' | 'workflows' | 'activities';

/** Every {@link WorkerRole}, as `--role` accepts them. */
export const WORKER_ROLES: readonly WorkerRole[] = ['all', 'workflows', 'activities'];

/** Options of {@link startWorkerProcess}. */
export interface WorkerProcessOptions {
  kind: WorkerKind;
  /** The worker program to run (a `.ts` one runs through tsx). Default `workers/<kind>.js` of the build when this runs from dist/, else `workers/<kind>.ts`. */
  program?: string;
  /** Temporal frontend `host:port`. */
  address: string;
  namespace?: string;
  /** Overrides the worker's default task queue. */
  taskQueue?: string;
  /** What a CPU worker polls for (`--role`; default `all`). */
  role?: WorkerRole;
  /** Artifact store root the activities use. */
  store?: string;
  /** How long running activities may finish after SIGTERM (`--shutdown-grace`). Default: the worker's own. */
  shutdownGraceSeconds?: number;
  /** Environment of the worker process. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Working directory. Default the current one (relative store paths resolve against it). */
  cwd?: string;
  /** Every output line of the worker. */
  onLine?: (line: string) => void;
  /** Worker output goes here (appended). */
  logFile?: string;
  /** How long to wait for the ready line. Default 120 s (the CPU worker bundles the workflows first). */
  readyTimeoutMs?: number;
  /**
   * The worker's scheduling niceness (0–19, `nice`): the processes it starts later (trainers, policy servers) inherit
   * it. Batch work on a host shared with the control plane runs above 0 so that queries are not queued behind it.
   */
  nice?: number;
}

/** The line a worker prints once it polls its task queue (see `workers/cpu.ts`). */
export const WORKER_READY = /gymflow worker ready: queue=(\S+)/;

/**
 * A worker running as a child process. {@link WorkerProcess.stop} is the graceful path (SIGTERM: the worker
 * stops polling and waits for its activities up to its `shutdownGraceTime`); {@link WorkerProcess.kill}
 * simulates a crash.
 */
export class WorkerProcess extends ChildHandle {
  /** @internal use {@link startWorkerProcess} */
  constructor(
    readonly kind: WorkerKind,
    readonly taskQueue: string,
    child: ManagedChild,
  ) {
    super(child);
  }

  /** SIGTERM, then SIGKILL to its process group after `graceMs` (default 60 s). */
  stop(graceMs = 60_000): Promise<ExitStatus> {
    return this.child.stop(graceMs);
  }

  /**
   * SIGKILL. With `group` the worker's whole process group dies (a host going down); without it only the
   * worker process does (`kill -9 <pid>`), and whatever it spawned must notice on its own.
   */
  async kill(options: { group?: boolean } = {}): Promise<ExitStatus> {
    if (options.group) this.child.signalGroup('SIGKILL');
    else this.child.signal('SIGKILL');
    return this.child.exited;
  }
}

/**
 * The build's worker program of `kind` (`dist/workers/<kind>.js`), for a caller running from the sources (a test, a
 * bench) that wants the worker as users run it: it loads the prebuilt workflow bundle, so it is ready in seconds where
 * the sources' worker first bundles the workflows.
 */
export function builtWorkerProgram(kind: WorkerKind): string {
  return join(PACKAGE_ROOT, 'dist', 'workers', `${kind}.js`);
}

/**
 * The worker program of `options.kind` and the arguments of `node` that run it (`[--import tsx] PROGRAM
 * --address … [--namespace …] [--task-queue …] [--store …] [--shutdown-grace …] [--role …]`).
 */
export function workerCommandLine(
  options: Pick<WorkerProcessOptions, 'kind' | 'program' | 'address' | 'namespace' | 'taskQueue' | 'store' | 'shutdownGraceSeconds' | 'role'>,
): { program: string; args: string[] } {
  const program = options.program ?? fileURLToPath(new URL(`../../workers/${options.kind}${MODULE_EXT}`, import.meta.url));
  const args = [
    ...(program.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : []),
    program,
    '--address',
    options.address,
    ...(options.namespace === undefined ? [] : ['--namespace', options.namespace]),
    ...(options.taskQueue === undefined ? [] : ['--task-queue', options.taskQueue]),
    ...(options.store === undefined ? [] : ['--store', options.store]),
    ...(options.shutdownGraceSeconds === undefined ? [] : ['--shutdown-grace', String(options.shutdownGraceSeconds)]),
    ...(options.role === undefined ? [] : ['--role', options.role]),
  ];
  return { program, args };
}

/**
 * Runs `node workers/<kind>.js --address …` (from the sources `node --import tsx workers/<kind>.ts`) and resolves once it prints its ready line.
 *
 * @example
 * ```ts
 * const gpu = await startWorkerProcess({ kind: 'gpu', address: server.address, store: '.gymflow/store' });
 * await gpu.kill(); // kill -9
 * ```
 */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<WorkerProcess> {
  const { program, args } = workerCommandLine(options);
  let markReady: (queue: string) => void = () => undefined;
  const ready = new Promise<string>((resolve) => (markReady = resolve));
  const label = options.role === undefined || options.role === 'all' ? `${options.kind} worker` : `${options.kind} worker (${options.role})`;
  const child = spawnManaged(label, process.execPath, args, {
    ...defined({ env: options.env, cwd: options.cwd, logFile: options.logFile }),
    onLine: (line) => {
      const m = WORKER_READY.exec(line);
      if (m) markReady(m[1] ?? '');
      options.onLine?.(line);
    },
  });
  // Before the worker polls, so everything it starts inherits it.
  if (options.nice !== undefined) {
    try {
      setPriority(child.pid, options.nice);
    } catch (err) {
      if (!isErrno(err, 'ESRCH')) throw err; // exited already: the wait below reports why
    }
  }
  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    ready.then((queue) => ({ queue })),
    child.exited.then((status) => ({ status })),
    new Promise<{ timeout: true }>((resolve) => (timer = setTimeout(() => resolve({ timeout: true }), timeoutMs))),
  ]);
  clearTimeout(timer);
  if ('queue' in outcome) return new WorkerProcess(options.kind, outcome.queue, child);
  if ('timeout' in outcome) {
    child.signalGroup('SIGKILL');
    throw new ProcessStartError(`${options.kind} worker (${program}) printed no ready line within ${timeoutMs} ms:\n${child.tail.toString()}`);
  }
  throw new ProcessStartError(
    `${options.kind} worker (${program}) exited during start-up (code ${String(outcome.status.code)}, signal ${String(outcome.status.signal)}):\n${child.tail.toString()}`,
  );
}
