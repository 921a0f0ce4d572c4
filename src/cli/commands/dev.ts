import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../../core/errors.js';
import {
  ensurePortFree,
  startDevServer,
  startWorkerProcess,
  tolerateClosedOutput,
  type DevServer,
  type ExitStatus,
  type WorkerKind,
  type WorkerProcess,
} from '../../runtime/dev-server.js';
import { SEARCH_ATTRIBUTES } from '../../loop/search-attributes.js';
import { requireTemporalBinary } from '../../runtime/temporal-cli.js';
import { parsePort, parsePositiveInteger } from '../options.js';
import { defined } from '../../core/defined.js';

/** Options of `gymflow dev`. */
export interface DevOptions {
  ip: string;
  port: number;
  uiPort?: number;
  db: string;
  headless?: boolean;
  workers: boolean;
  gpuWorker: boolean;
  store?: string;
  namespace: string;
  logDir: string;
  /** Seconds the workers get to finish running activities on Ctrl-C before they are killed. */
  grace: number;
}

function describeExit(s: ExitStatus): string {
  return s.signal ? `killed by ${s.signal}` : `exit code ${String(s.code)}`;
}

/**
 * Runs the dev stack until SIGINT/SIGTERM or until one of its processes dies: the Temporal dev server
 * (SQLite state in `opts.db`, Web UI, gymflow's search attributes) and the CPU and GPU workers as child
 * processes. Shuts down workers first (they finish or hand back their activities), then the server.
 * Resolves with the exit code: 0 after a requested shutdown, 1 when a process died on its own.
 */
export async function runDev(opts: DevOptions, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const binary = requireTemporalBinary();
  const uiPort = opts.uiPort ?? opts.port + 1000;
  if (!opts.headless && uiPort > 65_535) throw new ConfigError(`the Web UI would listen on port ${uiPort} (--port ${opts.port} + 1000), above 65535: pass --ui-port, or --headless`);
  // Refuse before starting anything, so nothing has to be torn down.
  await ensurePortFree(opts.ip, opts.port, 'Temporal gRPC frontend (--port)');
  if (!opts.headless) await ensurePortFree(opts.ip, uiPort, 'Temporal Web UI (--ui-port)');
  const db = resolve(opts.db);
  const logDir = resolve(opts.logDir);
  const say = (line: string): void => void out.write(`${line}\n`);

  const workers: WorkerProcess[] = [];
  let server: DevServer | undefined;
  let stopping = false;
  let failed = false;
  let wakeUp: () => void = () => undefined;
  const stopRequested = new Promise<void>((r) => (wakeUp = r));

  // Installed before anything starts: the children run in their own process groups, so a Ctrl-C that
  // killed this process by default would leave them running.
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      say(`gymflow dev: ${signal} again: killing everything now`);
      for (const w of workers) void w.kill({ group: true });
      void server?.kill();
      return;
    }
    say(`\ngymflow dev: ${signal}: stopping the workers (up to ${opts.grace} s for running activities; Ctrl-C again to kill), then the server`);
    stopping = true;
    wakeUp();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // The terminal closed (an ssh session ended): stop as on Ctrl-C. By default SIGHUP would end this process alone.
  process.on('SIGHUP', onSignal);
  tolerateClosedOutput(); // after SIGHUP the terminal is gone; the logs still go to --log-dir

  const watch = (name: string, exited: Promise<ExitStatus>, lastOutput: () => string): void => {
    void exited.then((status) => {
      if (stopping) return;
      failed = true;
      stopping = true;
      say(`gymflow dev: ${name} stopped on its own (${describeExit(status)}); shutting the rest down. Its last output:\n${lastOutput()}`);
      wakeUp();
    });
  };

  try {
    say(`gymflow dev: starting the Temporal dev server on ${opts.ip}:${opts.port} (db ${db})`);
    const started: DevServer = await startDevServer({
      binary,
      dbFilename: db,
      ip: opts.ip,
      port: opts.port,
      uiPort,
      searchAttributes: SEARCH_ATTRIBUTES,
      namespace: opts.namespace,
      logFile: join(logDir, 'temporal.log'),
      ...(opts.headless ? { headless: true } : {}),
    });
    server = started;
    watch('the Temporal dev server', started.exited, () => started.lastOutput());
    if (opts.workers && !stopping) {
      const kinds: WorkerKind[] = opts.gpuWorker ? ['cpu', 'gpu'] : ['cpu'];
      say(`gymflow dev: starting the ${kinds.join(' and ')} worker${kinds.length > 1 ? 's' : ''} (logs in ${logDir})`);
      const launched = await Promise.allSettled(
        kinds.map((kind) =>
          startWorkerProcess({
            kind,
            address: started.address,
            namespace: opts.namespace,
            logFile: join(logDir, `worker-${kind}.log`),
            shutdownGraceSeconds: opts.grace,
            ...defined({ store: opts.store }),
            onLine: (line) => say(`[${kind}] ${line}`),
          }),
        ),
      );
      for (const s of launched) if (s.status === 'fulfilled') workers.push(s.value);
      const problem = launched.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (problem) throw problem.reason;
      for (const w of workers) watch(`the ${w.kind} worker (pid ${w.pid})`, w.exited, () => w.lastOutput());
    }
    if (!stopping) {
      say('');
      say(`  Temporal:  ${started.address} (namespace ${opts.namespace}, pid ${started.pid})`);
      say(`  Web UI:    ${started.uiUrl ?? '(headless)'}`);
      say(`  workers:   ${workers.length === 0 ? '(none: --no-workers)' : workers.map((w) => `${w.kind} on ${w.taskQueue} (pid ${w.pid})`).join(', ')}`);
      say(`  start:     gymflow pipeline start examples/smoke.yaml --address ${started.address}`);
      say('  Ctrl-C stops everything.');
      say('');
    }
    await stopRequested;
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    stopping = true;
    // The workers give their activities `grace` seconds themselves; the kill is the fallback after that.
    const results = await Promise.all(workers.map(async (w) => [w, await w.stop((opts.grace + 15) * 1000)] as const));
    for (const [w, status] of results) say(`gymflow dev: ${w.kind} worker stopped (${describeExit(status)})`);
    if (server) {
      const status = await server.stop();
      say(`gymflow dev: Temporal dev server stopped (${describeExit(status)}); state kept in ${db}`);
    }
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
  }
  return failed ? 1 : 0;
}

/** `gymflow dev`: the Temporal dev server and both workers, in the foreground. */
export function devCommand(program: Command): void {
  program
    .command('dev')
    .description('run a local Temporal dev server (SQLite under .gymflow/, Web UI) and the CPU and GPU workers until Ctrl-C')
    .option('--ip <ip>', 'address the server binds to (0.0.0.0 lets workers on other hosts connect)', '127.0.0.1')
    .option('--port <port>', 'Temporal gRPC port', parsePort, 7233)
    .option('--ui-port <port>', 'Web UI port (default: --port + 1000)', parsePort)
    .option('--db <file>', 'SQLite file with the server state (runs survive restarts)', '.gymflow/temporal.db')
    .option('--headless', 'no Web UI')
    .option('--no-workers', 'start only the server (run workers elsewhere)')
    .option('--no-gpu-worker', 'start only the CPU worker (the GPU worker runs on another host)')
    .option('--store <dir>', 'artifact store root for the workers (default: $GYMFLOW_STORE, else .gymflow/store)')
    .option('--namespace <ns>', 'Temporal namespace', 'default')
    .option('--log-dir <dir>', 'server and worker logs', '.gymflow/logs')
    .option('--grace <seconds>', 'how long workers may finish running activities on shutdown', parsePositiveInteger, 60)
    .action(async (opts: DevOptions) => {
      process.exitCode = await runDev(opts);
    });
}
