import { InvalidArgumentError, type Command } from 'commander';
import {
  CLUSTER_COMPONENTS,
  clusterDir,
  clusterDown,
  clusterStatus,
  clusterStoreEnv,
  clusterUp,
  DEFAULT_CLUSTER_DIR,
  DEFAULT_CLUSTER_PORTS,
  type ClusterComponent,
  type ClusterStatus,
} from '../../runtime/cluster/index.js';
import { parsePort, printJson } from '../options.js';
import { defined } from '../../core/defined.js';

function parseComponents(words: readonly string[]): ClusterComponent[] | undefined {
  if (words.length === 0) return undefined;
  for (const w of words) {
    if (!(CLUSTER_COMPONENTS as readonly string[]).includes(w)) throw new InvalidArgumentError(`unknown component '${w}': expected one of ${CLUSTER_COMPONENTS.join(', ')}`);
  }
  return words as ClusterComponent[];
}

/** The status as a table: component, state, pid, address, log. */
export function formatClusterStatus(status: ClusterStatus): string {
  if (!status.created) return `no cluster in ${status.dir} (gymflow cluster up creates one)\n`;
  const rows = status.components.map((c) => [c.component, c.state, c.pid === undefined ? '' : String(c.pid), c.address ?? '', c.logFile]);
  const header = ['component', 'state', 'pid', 'address', 'log'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ');
  return [`cluster ${status.dir}   namespace ${status.namespace ?? ''}   store ${status.store ?? ''}`, line(header), ...rows.map(line)].join('\n') + '\n';
}

interface UpOptions {
  dir: string;
  port?: number;
  uiPort?: number;
  postgresPort?: number;
  s3Port?: number;
  namespace?: string;
  store?: string;
  workers: boolean;
  gpuWorker: boolean;
  postgresUser?: string;
}

/** Single-quotes `value` for a POSIX shell. */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:@=+-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** `gymflow cluster up|down|status|env`: the production topology (PostgreSQL, object store, Temporal server, Web UI, workers) on one machine. */
export function clusterCommand(program: Command): void {
  const cluster = program
    .command('cluster')
    .description('PostgreSQL, the object store, the Temporal server, its Web UI and the CPU and GPU workers as background processes on this machine (see docs/operations.md)');

  cluster
    .command('up')
    .description('start whatever of the cluster is not running (creating it on first use) and wait until each part answers')
    .argument('[components...]', `only these (and what they need): ${CLUSTER_COMPONENTS.join(', ')}`)
    .option('--dir <dir>', 'cluster directory: state, PostgreSQL data, logs', DEFAULT_CLUSTER_DIR)
    .option('--port <port>', `Temporal gRPC frontend port (fixed when the cluster is created; default ${DEFAULT_CLUSTER_PORTS.frontend})`, parsePort)
    .option('--ui-port <port>', `Web UI port (fixed at creation; default ${DEFAULT_CLUSTER_PORTS.ui})`, parsePort)
    .option('--postgres-port <port>', `PostgreSQL port (fixed at creation; default ${DEFAULT_CLUSTER_PORTS.postgres})`, parsePort)
    .option('--s3-port <port>', `the object store's S3 port (fixed at creation; default ${DEFAULT_CLUSTER_PORTS.s3})`, parsePort)
    .option('--namespace <ns>', 'Temporal namespace the workers use (fixed at creation; default default)')
    .option('--store <root>', "the workers' artifact store instead of the cluster's object store (fixed at creation; default s3://gymflow/store on it)")
    .option('--no-workers', 'start no worker (run them elsewhere)')
    .option('--no-gpu-worker', 'start only the CPU worker (the GPU worker runs on another host)')
    .option('--postgres-user <name>', 'the account PostgreSQL runs as when gymflow runs as root (default postgres)')
    .action(async (words: string[], opts: UpOptions) => {
      let only = parseComponents(words);
      if (only === undefined && (!opts.workers || !opts.gpuWorker)) {
        only = CLUSTER_COMPONENTS.filter((c) => (c === 'worker-cpu' ? opts.workers : c === 'worker-gpu' ? opts.workers && opts.gpuWorker : true));
      }
      const status = await clusterUp({
        dir: opts.dir,
        ports: defined({ frontend: opts.port, ui: opts.uiPort, postgres: opts.postgresPort, s3: opts.s3Port }),
        log: (line) => console.log(line),
        ...defined({ only, namespace: opts.namespace, store: opts.store, postgresUser: opts.postgresUser }),
      });
      process.stdout.write(`\n${formatClusterStatus(status)}`);
      console.log(`\n  start:  gymflow pipeline start examples/smoke.yaml --address ${status.temporalAddress ?? ''} --wait`);
      console.log('  store:  eval "$(gymflow cluster env)"; gymflow store ls');
      console.log('  stop:   gymflow cluster down');
    });

  cluster
    .command('down')
    .description('stop the cluster (workers first, PostgreSQL last); its data stays for the next up')
    .argument('[components...]', `only these: ${CLUSTER_COMPONENTS.join(', ')}`)
    .option('--dir <dir>', 'cluster directory', DEFAULT_CLUSTER_DIR)
    .action(async (words: string[], opts: { dir: string }) => {
      await clusterDown({ dir: opts.dir, log: (line) => console.log(line), ...defined({ only: parseComponents(words) }) });
    });

  cluster
    .command('status')
    .description('what of the cluster runs: component, state, pid, address, log file')
    .option('--dir <dir>', 'cluster directory', DEFAULT_CLUSTER_DIR)
    .option('--json', 'print JSON')
    .action((opts: { dir: string; json?: boolean }) => {
      const status = clusterStatus({ dir: opts.dir });
      if (opts.json) printJson(status);
      else process.stdout.write(formatClusterStatus(status));
    });

  cluster
    .command('env')
    .description("shell exports that point gymflow at the cluster: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, and the artifact store (GYMFLOW_STORE and the object store's GYMFLOW_S3_* endpoint and credentials)")
    .option('--dir <dir>', 'cluster directory', DEFAULT_CLUSTER_DIR)
    .option('--json', 'print JSON')
    .action((opts: { dir: string; json?: boolean }) => {
      const dir = clusterDir({ dir: opts.dir });
      const status = clusterStatus({ dir });
      const env = { TEMPORAL_ADDRESS: status.temporalAddress ?? '', TEMPORAL_NAMESPACE: status.namespace ?? '', ...clusterStoreEnv(dir) };
      if (opts.json) printJson(env);
      else process.stdout.write(Object.entries(env).map(([k, v]) => `export ${k}=${shellQuote(v)}\n`).join(''));
    });
}
