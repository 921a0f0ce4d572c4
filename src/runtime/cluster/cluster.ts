/**
 * `gymflow cluster`: the production topology on one machine, without containers — PostgreSQL (the system's
 * package) in a data directory under `.gymflow/cluster/`, the object store (SeaweedFS's S3 gateway, its data
 * beside PostgreSQL's), the real Temporal server (not the dev server) with its persistence and visibility in that
 * PostgreSQL, the Temporal Web UI, and the gymflow CPU and GPU workers. The workers are set up as if on two hosts:
 * each has a working directory and a store cache of its own, and they share only Temporal and the artifact store
 * `s3://gymflow/store` on the object store. Each runs in the background ({@link startDaemon}); `up` starts
 * whatever is not running, `down` stops them (workers first, PostgreSQL last), `status` says what runs.
 *
 * Layout of the cluster directory:
 *
 * ```
 * cluster.json          ports, namespace, workers, the schema version set up (fixed at creation)
 * postgres.password     the `temporal` role's password (0600), made at creation
 * object-store.secret   the object store's S3 secret key (0600), made at creation; the access key is `gymflow`
 * postgres/             PostgreSQL's data directory (owned by the user PostgreSQL runs as)
 * object-store/data/    SeaweedFS's data (master, volumes, filer); object-store/s3.json its identity (0600)
 * workers/<kind>/       each worker's working directory: work/ (trainer runs, checkouts), store-cache/
 * temporal/             the server's configuration and dynamic configuration (rewritten at every start)
 * ui/config/            the Web UI server's configuration
 * logs/<component>.log  each component's output, appended
 * run/<component>.json  pid files
 * ```
 *
 * PostgreSQL refuses to run as root: when gymflow runs as root, PostgreSQL runs as `postgresUser` (default the
 * `postgres` account Debian's package creates) through `setpriv`, and owns its data directory.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join, parse as parsePath, resolve } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { ConfigError, GymflowError } from '../../core/errors.js';
import { SEARCH_ATTRIBUTES } from '../../loop/search-attributes.js';
import { DEFAULT_DYNAMIC_CONFIG, ensurePortFree, ensureSearchAttributes, WORKER_READY, workerCommandLine, type WorkerKind } from '../dev-server.js';
import { requireTemporalBinary, runTemporal, TemporalCliError } from '../temporal-cli.js';
import { requireClusterBinaries, requirePostgresBinaries, TEMPORAL_SERVER_VERSION, type ClusterBinaries, type PostgresBinaries } from './binaries.js';
import {
  CLUSTER_HOST,
  CLUSTER_PORT_NAMES,
  CLUSTER_STORE_URL,
  OBJECT_STORE_ACCESS_KEY,
  OBJECT_STORE_PORT_NAMES,
  objectStoreArgs,
  objectStoreIdentities,
  POSTGRES_USER,
  TEMPORAL_DATABASE,
  temporalDynamicConfig,
  temporalServerConfig,
  uiServerConfig,
  VISIBILITY_DATABASE,
  type ClusterPorts,
} from './configs.js';
import { daemonAlive, readDaemon, startDaemon, stopDaemon, type DaemonRecord } from './daemon.js';
import { defined } from '../../core/defined.js';

/** The cluster's parts, in start order (`down` stops them in the reverse order). */
export const CLUSTER_COMPONENTS = ['postgres', 'object-store', 'temporal', 'ui', 'worker-cpu', 'worker-gpu'] as const;
/** One part of the cluster. */
export type ClusterComponent = (typeof CLUSTER_COMPONENTS)[number];

/** The default cluster directory, relative to the project directory. */
export const DEFAULT_CLUSTER_DIR = join('.gymflow', 'cluster');

/** The ports a user may choose (PostgreSQL off 5432, which a system PostgreSQL may hold); the others are picked free when the cluster is created. */
export const DEFAULT_CLUSTER_PORTS = { postgres: 5433, frontend: 7233, ui: 8080, s3: 8333 } as const;

/** What `cluster.json` holds. */
export interface ClusterState {
  readonly format: 1;
  readonly createdAt: string;
  /** The directory `up` first ran in (relative paths of `up`'s options resolved against it). */
  readonly projectDir: string;
  readonly namespace: string;
  readonly ports: ClusterPorts;
  /** The artifact store root the workers get (`--store`); unset: `s3://gymflow/store` on the cluster's object store. */
  readonly store?: string;
  /** The Temporal server version whose schema the databases have; unset until set up. */
  readonly schemaVersion?: string;
}

/** Options of {@link clusterUp}. Ports, namespace and store count when the cluster is created. */
export interface ClusterUpOptions {
  /** The cluster directory. Default `<projectDir>/.gymflow/cluster`. */
  readonly dir?: string;
  /** Default the current directory. */
  readonly projectDir?: string;
  readonly namespace?: string;
  readonly ports?: Partial<Pick<ClusterPorts, 'postgres' | 'frontend' | 'ui' | 's3'>>;
  readonly store?: string;
  /** Start only these (and what they need: PostgreSQL before the server, the server before the rest). */
  readonly only?: readonly ClusterComponent[];
  /** The account PostgreSQL runs as when this process is root. Default `postgres`. */
  readonly postgresUser?: string;
  /** Progress lines. */
  readonly log?: (line: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** A component's state as {@link clusterStatus} reports it. */
export interface ComponentStatus {
  readonly component: ClusterComponent;
  /** `running`; `stopped` (no pid file); `exited` (a pid file whose process is gone: it died or was killed). */
  readonly state: 'running' | 'stopped' | 'exited';
  readonly pid?: number;
  /** Where it listens, for the ones that do. */
  readonly address?: string;
  readonly logFile: string;
}

/** What {@link clusterStatus} returns. */
export interface ClusterStatus {
  readonly dir: string;
  /** False when the directory holds no cluster yet. */
  readonly created: boolean;
  readonly namespace?: string;
  /** The Temporal frontend, for `--address` / `TEMPORAL_ADDRESS`. */
  readonly temporalAddress?: string;
  readonly uiUrl?: string;
  /** The workers' artifact store: `s3://gymflow/store` on the object store, unless `--store` named another. */
  readonly store?: string;
  /** The object store's S3 endpoint (`GYMFLOW_S3_ENDPOINT`). */
  readonly s3Endpoint?: string;
  readonly components: readonly ComponentStatus[];
}

/** Something of the cluster failed to come up; the message ends with the end of its log. */
export class ClusterError extends GymflowError {
  constructor(message: string) {
    super('CLUSTER_ERROR', message);
  }
}

/** Paths inside a cluster directory. */
export function clusterPaths(dir: string) {
  return {
    dir,
    state: join(dir, 'cluster.json'),
    password: join(dir, 'postgres.password'),
    pgData: join(dir, 'postgres'),
    s3Secret: join(dir, 'object-store.secret'),
    objectStore: join(dir, 'object-store'),
    objectStoreData: join(dir, 'object-store', 'data'),
    objectStoreIdentities: join(dir, 'object-store', 's3.json'),
    worker: (kind: WorkerKind) => join(dir, 'workers', kind),
    temporalConfig: join(dir, 'temporal', 'config.yaml'),
    dynamicConfig: join(dir, 'temporal', 'dynamicconfig.yaml'),
    uiRoot: join(dir, 'ui'),
    uiConfig: join(dir, 'ui', 'config', 'cluster.yaml'),
    log: (c: ClusterComponent) => join(dir, 'logs', `${c}.log`),
    pid: (c: ClusterComponent) => join(dir, 'run', `${c}.json`),
  };
}

/** The cluster directory for `options` (absolute). */
export function clusterDir(options: { dir?: string; projectDir?: string } = {}): string {
  return resolve(options.projectDir ?? process.cwd(), options.dir ?? DEFAULT_CLUSTER_DIR);
}

/** Reads `cluster.json`; `undefined` when the directory holds no cluster. */
export function readClusterState(dir: string): ClusterState | undefined {
  const file = clusterPaths(dir).state;
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  } catch (err) {
    throw new ConfigError(`${file}: not a cluster state file (${(err as Error).message})`);
  }
}

function writeClusterState(dir: string, state: ClusterState): void {
  const file = clusterPaths(dir).state;
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${file}.tmp`, file); // a reader never sees half a file
}

function tailOf(file: string, lines = 15): string {
  try {
    const text = readFileSync(file, 'utf8').trimEnd().split('\n');
    // The server logs JSON lines with whole stack traces: the message and error are at their start.
    return text
      .slice(-lines)
      .map((l) => (l.length > 600 ? `${l.slice(0, 600)} …` : l))
      .join('\n');
  } catch {
    return '(no log)';
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns true; throws a {@link ClusterError} when `daemon` dies or after `timeoutMs`. */
async function waitFor(what: string, daemon: DaemonRecord, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!daemonAlive(daemon)) throw new ClusterError(`${what} exited during start-up; the end of ${daemon.logFile}:\n${tailOf(daemon.logFile)}`);
    if (await probe()) return;
    await sleep(250);
  }
  throw new ClusterError(`${what} did not come up within ${Math.round(timeoutMs / 1000)} s (it still runs, pid ${daemon.pid}); the end of ${daemon.logFile}:\n${tailOf(daemon.logFile)}`);
}

/** Runs a program to its end; resolves with its exit code and output. */
function run(command: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env, timeout: options.timeoutMs ?? 120_000 });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code: code ?? (signal ? 128 : 1), output }));
  });
}

/** Whether `GET http://host:port/` answers (any status below 500). */
function httpAnswers(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const req = request({ host: CLUSTER_HOST, port, path: '/', method: 'GET', timeout: 5_000 }, (res) => {
      res.resume();
      resolvePromise((res.statusCode ?? 500) < 500);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolvePromise(false));
    req.end();
  });
}

// ---------------------------------------------------------------- PostgreSQL

/** How PostgreSQL's programs are run: as this process's user, or (when root) through setpriv as another. */
interface PostgresRunner {
  readonly prefix: readonly string[];
  readonly uid: number;
  readonly gid: number;
  readonly user: string;
}

function postgresRunner(user: string | undefined): PostgresRunner {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { prefix: [], uid, gid: process.getgid?.() ?? 0, user: `uid ${uid}` };
  const name = user ?? 'postgres';
  const id = (flag: string): number => {
    const r = spawnSync('id', [flag, name], { encoding: 'utf8' });
    if (r.status !== 0) {
      throw new ConfigError(`PostgreSQL refuses to run as root and there is no account '${name}' to run it as (${r.stderr.trim()}); create one or pass --postgres-user`);
    }
    return Number(r.stdout.trim());
  };
  const u = id('-u');
  const g = id('-g');
  if (u === 0) throw new ConfigError(`--postgres-user ${name} is root; PostgreSQL refuses to run as root`);
  return { prefix: ['setpriv', `--reuid=${u}`, `--regid=${g}`, '--clear-groups', '--'], uid: u, gid: g, user: name };
}

/** Throws a {@link ConfigError} naming the first folder on the way to `dir` that `runner`'s user cannot search. */
function checkReachable(dir: string, runner: PostgresRunner): void {
  if (runner.prefix.length === 0) return;
  const probe = (path: string, test: string): boolean => spawnSync(runner.prefix[0] as string, [...runner.prefix.slice(1), 'test', test, path]).status === 0;
  if (probe(dir, '-w')) return;
  const chain: string[] = [];
  for (let p = dir; ; p = dirname(p)) {
    chain.unshift(p);
    if (p === parsePath(p).root) break;
  }
  const blocked = chain.find((p) => !probe(p, '-x')) ?? dir;
  throw new ConfigError(
    `PostgreSQL runs as ${runner.user} (it refuses root), who cannot reach its data directory ${dir}: ${blocked} is not searchable by ${runner.user}. ` +
      `Let it through (chmod o+x ${blocked}) or put the cluster elsewhere (--dir)`,
  );
}

async function initPostgres(paths: ReturnType<typeof clusterPaths>, pg: PostgresBinaries, runner: PostgresRunner, log: (l: string) => void): Promise<void> {
  if (existsSync(join(paths.pgData, 'PG_VERSION'))) return;
  mkdirSync(paths.pgData, { recursive: true, mode: 0o700 });
  chownSync(paths.pgData, runner.uid, runner.gid);
  chmodSync(paths.pgData, 0o700);
  checkReachable(paths.pgData, runner);
  if (!existsSync(paths.password)) writeFileSync(paths.password, randomBytes(18).toString('base64url'), { mode: 0o600 });
  // initdb reads the password from a file its user can read; gone once the cluster exists.
  const pwfile = join(paths.dir, 'postgres.pwfile');
  writeFileSync(pwfile, readFileSync(paths.password, 'utf8'), { mode: 0o600 });
  chownSync(pwfile, runner.uid, runner.gid);
  log(`gymflow cluster: initdb ${paths.pgData} (PostgreSQL as ${runner.user})`);
  try {
    const [cmd, ...pre] = [...runner.prefix, pg.initdb];
    const r = await run(cmd as string, [...pre, '-D', paths.pgData, '-U', POSTGRES_USER, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C'], { timeoutMs: 300_000 });
    if (r.code !== 0) throw new ClusterError(`initdb ${paths.pgData} failed (exit ${r.code}):\n${r.output.trim().split('\n').slice(-15).join('\n')}`);
  } finally {
    rmSync(pwfile, { force: true });
  }
}

async function startPostgres(paths: ReturnType<typeof clusterPaths>, state: ClusterState, pg: PostgresBinaries, runner: PostgresRunner, log: (l: string) => void): Promise<void> {
  await initPostgres(paths, pg, runner, log);
  await ensurePortFree(CLUSTER_HOST, state.ports.postgres, 'PostgreSQL (--postgres-port)');
  const [cmd, ...pre] = [...runner.prefix, pg.postgres];
  const daemon = await startDaemon({
    name: 'postgres',
    command: cmd as string,
    args: [
      ...pre,
      '-D',
      paths.pgData,
      '-p',
      String(state.ports.postgres),
      '-c',
      `listen_addresses=${CLUSTER_HOST}`,
      // TCP only: no socket in /var/run/postgresql (another PostgreSQL's) or in the data directory.
      '-c',
      'unix_socket_directories=',
      // The server's four services each keep a pool; the default 100 is tight.
      '-c',
      'max_connections=200',
    ],
    pidFile: paths.pid('postgres'),
    logFile: paths.log('postgres'),
  });
  log(`gymflow cluster: PostgreSQL starting on ${CLUSTER_HOST}:${state.ports.postgres} (pid ${daemon.pid})`);
  await waitFor('PostgreSQL', daemon, async () => (await run(pg.pgIsready, ['-h', CLUSTER_HOST, '-p', String(state.ports.postgres), '-t', '5'])).code === 0, 120_000);
}

// ---------------------------------------------------------------- Temporal schema

/** Creates the two databases and brings their schemas to the server's version (`temporal-sql-tool`). */
async function setUpSchema(dir: string, state: ClusterState, bins: ClusterBinaries, log: (l: string) => void): Promise<ClusterState> {
  if (state.schemaVersion === TEMPORAL_SERVER_VERSION) return state;
  const paths = clusterPaths(dir);
  const env = { ...process.env, SQL_PASSWORD: readFileSync(paths.password, 'utf8').trim() };
  const tool = async (database: string, args: readonly string[], tolerate?: RegExp): Promise<void> => {
    const full = ['--plugin', 'postgres12', '--endpoint', CLUSTER_HOST, '--port', String(state.ports.postgres), '--user', POSTGRES_USER, '--database', database, ...args];
    const r = await run(bins.sqlTool, full, { env, timeoutMs: 300_000 });
    if (r.code !== 0 && !(tolerate?.test(r.output) ?? false)) {
      throw new ClusterError(`temporal-sql-tool ${full.join(' ')} failed (exit ${r.code}):\n${r.output.trim().split('\n').slice(-10).join('\n')}`);
    }
  };
  for (const [database, schema] of [
    [TEMPORAL_DATABASE, 'temporal'],
    [VISIBILITY_DATABASE, 'visibility'],
  ] as const) {
    log(`gymflow cluster: schema of ${database} → ${TEMPORAL_SERVER_VERSION}`);
    if (state.schemaVersion === undefined) {
      // A first attempt that stopped half-way left the database or the version table behind.
      await tool(database, ['create-database'], /already exists/);
      await tool(database, ['setup-schema', '--version', '0.0'], /already exists/);
    }
    await tool(database, ['update-schema', '--schema-name', `postgresql/v12/${schema}`]);
  }
  const next = { ...state, schemaVersion: TEMPORAL_SERVER_VERSION };
  writeClusterState(dir, next);
  return next;
}

// ---------------------------------------------------------------- Temporal server and UI

function writeTemporalConfig(paths: ReturnType<typeof clusterPaths>, state: ClusterState): void {
  mkdirSync(dirname(paths.temporalConfig), { recursive: true });
  const password = readFileSync(paths.password, 'utf8').trim();
  writeFileSync(paths.dynamicConfig, toYaml(temporalDynamicConfig(DEFAULT_DYNAMIC_CONFIG)));
  writeFileSync(paths.temporalConfig, toYaml(temporalServerConfig({ ports: state.ports, postgresPassword: password, dynamicConfigFile: paths.dynamicConfig })), { mode: 0o600 });
}

async function startTemporal(paths: ReturnType<typeof clusterPaths>, state: ClusterState, bins: ClusterBinaries, log: (l: string) => void): Promise<void> {
  for (const name of ['frontend', 'frontendHttp', 'frontendMembership', 'history', 'historyMembership', 'matching', 'matchingMembership', 'worker', 'workerMembership'] as const) {
    await ensurePortFree(CLUSTER_HOST, state.ports[name], `Temporal server (${name} port)`);
  }
  writeTemporalConfig(paths, state);
  const daemon = await startDaemon({
    name: 'temporal',
    command: bins.temporalServer,
    args: ['--config-file', paths.temporalConfig, '--allow-no-auth', 'start'],
    pidFile: paths.pid('temporal'),
    logFile: paths.log('temporal'),
  });
  const address = `${CLUSTER_HOST}:${state.ports.frontend}`;
  log(`gymflow cluster: Temporal server ${TEMPORAL_SERVER_VERSION} starting on ${address} (pid ${daemon.pid})`);
  const cli = requireTemporalBinary();
  await waitFor(
    'the Temporal server',
    daemon,
    async () => (await runTemporal(['operator', 'cluster', 'health', '--address', address], { binary: cli, check: false, timeoutMs: 10_000 })).code === 0,
    180_000,
  );
  await ensureNamespace(address, state.namespace, cli, daemon);
}

/**
 * Registers the namespace (a real server has none but its system namespace) and gymflow's search attributes.
 * Right after start-up the server may still refuse (its history service joining the ring), and a namespace
 * just created reaches the frontend's cache within seconds: until then the calls are tried again.
 */
async function ensureNamespace(address: string, namespace: string, cli: string, daemon: DaemonRecord): Promise<void> {
  const common = ['--address', address, '--namespace', namespace];
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const described = await runTemporal(['operator', 'namespace', 'describe', ...common], { binary: cli, check: false });
      if (described.code !== 0) {
        const created = await runTemporal(['operator', 'namespace', 'create', ...common, '--retention', '720h'], { binary: cli, check: false });
        if (created.code !== 0 && !/already (registered|exists)/i.test(created.stderr + created.stdout)) {
          throw new TemporalCliError(['operator', 'namespace', 'create', ...common], created);
        }
      }
      await ensureSearchAttributes(address, SEARCH_ATTRIBUTES, { namespace, binary: cli });
      return;
    } catch (err) {
      if (!(err instanceof TemporalCliError) || !daemonAlive(daemon)) throw err;
      if (Date.now() > deadline) throw new ClusterError(`cannot register namespace ${namespace} and gymflow's search attributes on ${address}: ${err.message}`);
      await sleep(1_000);
    }
  }
}

async function startUi(paths: ReturnType<typeof clusterPaths>, state: ClusterState, bins: ClusterBinaries, log: (l: string) => void): Promise<void> {
  await ensurePortFree(CLUSTER_HOST, state.ports.ui, 'Temporal Web UI (--ui-port)');
  mkdirSync(dirname(paths.uiConfig), { recursive: true });
  writeFileSync(paths.uiConfig, toYaml(uiServerConfig({ ports: state.ports, namespace: state.namespace })));
  const daemon = await startDaemon({
    name: 'ui',
    command: bins.uiServer,
    args: ['--root', paths.uiRoot, '--config', 'config', '--env', 'cluster', 'start'],
    pidFile: paths.pid('ui'),
    logFile: paths.log('ui'),
  });
  log(`gymflow cluster: Web UI starting on http://${CLUSTER_HOST}:${state.ports.ui} (pid ${daemon.pid})`);
  await waitFor('the Web UI server', daemon, () => httpAnswers(state.ports.ui), 60_000);
}

// ---------------------------------------------------------------- object store

/** The object store's S3 secret key, made (random, 0600) on first use. */
function objectStoreSecret(paths: ReturnType<typeof clusterPaths>): string {
  if (!existsSync(paths.s3Secret)) writeFileSync(paths.s3Secret, randomBytes(24).toString('base64url'), { mode: 0o600, flag: 'wx' });
  return readFileSync(paths.s3Secret, 'utf8').trim();
}

/**
 * What a process needs to use the cluster's artifact store: `GYMFLOW_STORE` and the object store's endpoint and
 * credentials (`GYMFLOW_S3_*`, docs/store.md). When `--store` named a store of the user's, only `GYMFLOW_STORE`.
 *
 * @example
 * ```ts
 * const env = clusterStoreEnv(clusterDir());
 * const store = await ArtifactStore.open({ root: env.GYMFLOW_STORE, env: { ...process.env, ...env } });
 * ```
 */
export function clusterStoreEnv(dir: string): Record<string, string> {
  const state = readClusterState(dir);
  if (state === undefined) throw new ConfigError(`no cluster in ${dir} (gymflow cluster up creates one)`);
  if (state.store !== undefined) return { GYMFLOW_STORE: state.store };
  const ports = withObjectStorePorts(state).ports;
  return {
    GYMFLOW_STORE: CLUSTER_STORE_URL,
    GYMFLOW_S3_ENDPOINT: `http://${CLUSTER_HOST}:${ports.s3}`,
    GYMFLOW_S3_ACCESS_KEY: OBJECT_STORE_ACCESS_KEY,
    GYMFLOW_S3_SECRET_KEY: objectStoreSecret(clusterPaths(dir)),
  };
}

/**
 * A folder for the object store's Unix sockets: the cluster's `run/`, unless its path is too long for a socket's
 * (108 bytes on Linux, with the file name), then the temp folder (the names carry the S3 port, so clusters differ).
 */
function socketDir(paths: ReturnType<typeof clusterPaths>, port: number): string {
  const run = dirname(paths.pid('object-store'));
  if (Buffer.byteLength(join(run, 'filer.sock')) < 100) return run;
  const dir = join(tmpdir(), `gymflow-object-store-${port}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

async function startObjectStore(paths: ReturnType<typeof clusterPaths>, state: ClusterState, bins: ClusterBinaries, log: (l: string) => void): Promise<void> {
  for (const name of OBJECT_STORE_PORT_NAMES) await ensurePortFree(CLUSTER_HOST, state.ports[name], `object store (${name} port${name === 's3' ? ', --s3-port' : ''})`);
  mkdirSync(paths.objectStoreData, { recursive: true, mode: 0o700 });
  const secret = objectStoreSecret(paths);
  writeFileSync(paths.objectStoreIdentities, JSON.stringify(objectStoreIdentities(secret)), { mode: 0o600 });
  const run = socketDir(paths, state.ports.s3);
  mkdirSync(run, { recursive: true });
  const daemon = await startDaemon({
    name: 'object-store',
    command: bins.weed,
    args: objectStoreArgs({ ports: state.ports, dataDir: paths.objectStoreData, socketDir: run, identitiesFile: paths.objectStoreIdentities }),
    cwd: paths.objectStore,
    pidFile: paths.pid('object-store'),
    logFile: paths.log('object-store'),
  });
  const endpoint = `http://${CLUSTER_HOST}:${state.ports.s3}`;
  log(`gymflow cluster: object store (SeaweedFS S3) starting on ${endpoint} (pid ${daemon.pid})`);
  // Up once its S3 gateway answers an authenticated request, with the store's bucket made (so that a worker's
  // first open finds it). The AWS SDK loads only here.
  const { parseS3Url, s3ClientConfig, S3Bucket } = await import('../../hub/store/s3.js');
  const env = { GYMFLOW_S3_ENDPOINT: endpoint, GYMFLOW_S3_ACCESS_KEY: OBJECT_STORE_ACCESS_KEY, GYMFLOW_S3_SECRET_KEY: secret };
  const bucket = new S3Bucket(parseS3Url(CLUSTER_STORE_URL), { ...s3ClientConfig(env), maxAttempts: 1 });
  try {
    await waitFor(
      'the object store',
      daemon,
      () =>
        bucket.ensureBucket(true).then(
          () => true,
          () => false,
        ),
      120_000,
    );
  } finally {
    bucket.destroy();
  }
}

// ---------------------------------------------------------------- workers

/**
 * Starts a worker as it would run on a host of its own: its working directory `workers/<kind>/` (trainer runs and
 * checkouts under `work/`, the store's object cache under `store-cache/`), the store and the server given by
 * address. Nothing of one worker's directory is the other's: they exchange only refs through Temporal and objects
 * through the store.
 */
async function startWorker(paths: ReturnType<typeof clusterPaths>, state: ClusterState, kind: WorkerKind, env: NodeJS.ProcessEnv, log: (l: string) => void): Promise<void> {
  const component: ClusterComponent = `worker-${kind}`;
  const address = `${CLUSTER_HOST}:${state.ports.frontend}`;
  const home = paths.worker(kind);
  mkdirSync(home, { recursive: true });
  const storeEnv = clusterStoreEnv(paths.dir);
  const { args } = workerCommandLine({ kind, address, namespace: state.namespace, store: storeEnv.GYMFLOW_STORE as string });
  args.push('--work-dir', join(home, 'work'));
  const logFile = paths.log(component);
  const offset = existsSync(logFile) ? statSync(logFile).size : 0;
  const daemon = await startDaemon({
    name: component,
    command: process.execPath,
    args,
    cwd: home,
    env: { ...env, ...storeEnv, GYMFLOW_STORE_CACHE: join(home, 'store-cache'), TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: state.namespace },
    pidFile: paths.pid(component),
    logFile,
  });
  log(`gymflow cluster: ${kind} worker starting (pid ${daemon.pid})`);
  await waitFor(
    `the ${kind} worker`,
    daemon,
    async () => {
      const text = readFileSync(logFile).subarray(offset).toString('utf8');
      return WORKER_READY.test(text);
    },
    180_000,
  );
}

// ---------------------------------------------------------------- up, down, status

/**
 * A free port for one of the server's internal listeners, below 32768: the server records its membership ports
 * in a PostgreSQL `smallint` column (`cluster_membership.rpc_port`), which the kernel's ephemeral ports (from
 * 32768 up) overflow.
 */
async function freeInternalPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    try {
      await ensurePortFree(CLUSTER_HOST, port, 'internal port');
      return port;
    } catch {
      // taken: try another
    }
  }
  throw new ClusterError(`no free port between 20000 and 32000 on ${CLUSTER_HOST} for the Temporal server's internal listeners`);
}

async function createState(dir: string, options: ClusterUpOptions): Promise<ClusterState> {
  const chosen: Partial<Record<keyof ClusterPorts, number>> = { ...DEFAULT_CLUSTER_PORTS, ...options.ports };
  const ports = {} as Record<keyof ClusterPorts, number>;
  const taken = new Set<number>();
  for (const name of CLUSTER_PORT_NAMES) {
    let port = chosen[name];
    while (port === undefined || taken.has(port)) port = await freeInternalPort();
    ports[name] = port;
    taken.add(port);
  }
  const state: ClusterState = {
    format: 1,
    createdAt: new Date().toISOString(),
    projectDir: resolve(options.projectDir ?? process.cwd()),
    namespace: options.namespace ?? 'default',
    ports,
    ...defined({ store: options.store === undefined ? undefined : options.store.startsWith('s3://') ? options.store : resolve(options.projectDir ?? process.cwd(), options.store) }),
  };
  mkdirSync(dir, { recursive: true });
  writeClusterState(dir, state);
  return state;
}

/**
 * The state with the object store's ports: a cluster made before the cluster ran an object store has none, and
 * gets them (the S3 port's default, else a free one; the others free) the first time they are needed.
 */
function withObjectStorePorts(state: ClusterState): ClusterState {
  if (OBJECT_STORE_PORT_NAMES.every((n) => typeof state.ports[n] === 'number')) return state;
  throw new ClusterError(`the cluster's state has no object store ports (made before the cluster had an object store): run \`gymflow cluster up\` once to add them`);
}

async function addObjectStorePorts(dir: string, state: ClusterState, asked: number | undefined): Promise<ClusterState> {
  if (OBJECT_STORE_PORT_NAMES.every((n) => typeof state.ports[n] === 'number')) return state;
  const taken = new Set<number>(Object.values(state.ports));
  const ports: Record<string, number> = { ...state.ports };
  for (const name of OBJECT_STORE_PORT_NAMES) {
    let port = name === 's3' ? (asked ?? DEFAULT_CLUSTER_PORTS.s3) : undefined;
    if (port !== undefined && name === 's3' && asked === undefined) {
      // The default S3 port may be taken on this machine: an older cluster never promised it.
      try {
        await ensurePortFree(CLUSTER_HOST, port, 'object store');
      } catch {
        port = undefined;
      }
    }
    while (port === undefined || taken.has(port)) port = await freeInternalPort();
    ports[name] = port;
    taken.add(port);
  }
  const next: ClusterState = { ...state, ports: ports as unknown as ClusterPorts };
  writeClusterState(dir, next);
  return next;
}

/** Refuses options that contradict a cluster made earlier (its ports are in its database's membership table). */
function checkSameCluster(dir: string, state: ClusterState, options: ClusterUpOptions): void {
  const clash = (what: string, was: unknown, asked: unknown): never => {
    throw new ConfigError(`${dir} holds a cluster made with ${what} ${String(was)}, not ${String(asked)}: drop the option, or give another --dir`);
  };
  for (const [name, asked] of Object.entries(options.ports ?? {}) as [keyof ClusterPorts, number | undefined][]) {
    if (asked !== undefined && state.ports[name] !== undefined && asked !== state.ports[name]) clash(`${name} port`, state.ports[name], asked);
  }
  const store = options.store === undefined ? undefined : options.store.startsWith('s3://') ? options.store : resolve(options.projectDir ?? process.cwd(), options.store);
  if (store !== undefined && store !== state.store) clash('store', state.store ?? CLUSTER_STORE_URL, store);
  if (options.namespace !== undefined && options.namespace !== state.namespace) clash('namespace', state.namespace, options.namespace);
}

/** Components that need `c` running first. */
const NEEDS: Record<ClusterComponent, readonly ClusterComponent[]> = {
  postgres: [],
  'object-store': [],
  temporal: ['postgres'],
  ui: ['temporal'],
  'worker-cpu': ['temporal', 'object-store'],
  'worker-gpu': ['temporal', 'object-store'],
};

function withPrerequisites(only: readonly ClusterComponent[]): Set<ClusterComponent> {
  const out = new Set<ClusterComponent>();
  const add = (c: ClusterComponent): void => {
    if (out.has(c)) return;
    out.add(c);
    for (const n of NEEDS[c]) add(n);
  };
  for (const c of only) add(c);
  return out;
}

function running(paths: ReturnType<typeof clusterPaths>, c: ClusterComponent): DaemonRecord | undefined {
  const record = readDaemon(paths.pid(c));
  return record !== undefined && daemonAlive(record) ? record : undefined;
}

/**
 * Starts every component of the cluster in `dir` that is not running (creating the cluster on first use),
 * and resolves once each answers: PostgreSQL accepts connections, the schema is at the server's version, the
 * server is healthy with the namespace and search attributes registered, the Web UI serves, the workers poll.
 *
 * @example
 * ```ts
 * const status = await clusterUp({ ports: { frontend: 7233 } });
 * // gymflow pipeline start examples/smoke.yaml --address status.temporalAddress
 * ```
 */
export async function clusterUp(options: ClusterUpOptions = {}): Promise<ClusterStatus> {
  const dir = clusterDir(options);
  const log = options.log ?? (() => undefined);
  const pg = requirePostgresBinaries(options.env);
  const bins = requireClusterBinaries(options.env);
  requireTemporalBinary(options.env);
  const runner = postgresRunner(options.postgresUser);
  let state = readClusterState(dir);
  if (state === undefined) state = await createState(dir, options);
  else checkSameCluster(dir, state, options);
  state = await addObjectStorePorts(dir, state, options.ports?.s3);
  const paths = clusterPaths(dir);
  const wanted = withPrerequisites(options.only ?? CLUSTER_COMPONENTS);
  const env = options.env ?? process.env;

  if (wanted.has('postgres') && !running(paths, 'postgres')) await startPostgres(paths, state, pg, runner, log);
  if (wanted.has('object-store') && !running(paths, 'object-store')) await startObjectStore(paths, state, bins, log);
  if (wanted.has('temporal') && !running(paths, 'temporal')) {
    state = await setUpSchema(dir, state, bins, log);
    await startTemporal(paths, state, bins, log);
  }
  if (wanted.has('ui') && !running(paths, 'ui')) await startUi(paths, state, bins, log);
  for (const kind of ['cpu', 'gpu'] as const) {
    const component: ClusterComponent = `worker-${kind}`;
    if (wanted.has(component) && !running(paths, component)) await startWorker(paths, state, kind, env, log);
  }
  return clusterStatus({ dir });
}

/**
 * Stops the cluster's components (all, or `only`), workers first (they finish or hand back their activities
 * within their grace), then the Web UI, the server, the object store, PostgreSQL (a fast shutdown: sessions end,
 * data is kept).
 * Resolves once no process of theirs is left; the cluster directory, and with it every run, stays.
 */
export async function clusterDown(options: { dir?: string; projectDir?: string; only?: readonly ClusterComponent[]; log?: (line: string) => void } = {}): Promise<void> {
  const dir = clusterDir(options);
  const paths = clusterPaths(dir);
  const log = options.log ?? (() => undefined);
  const only = new Set(options.only ?? CLUSTER_COMPONENTS);
  // The UI and the workers outlive a stopped server (they reconnect once it is back); the server does not
  // outlive its database, so stopping PostgreSQL stops the server first.
  if (only.has('postgres')) only.add('temporal');
  for (const c of [...CLUSTER_COMPONENTS].reverse()) {
    if (!only.has(c)) continue;
    const record = readDaemon(paths.pid(c));
    if (record === undefined) continue;
    const how =
      c === 'postgres'
        ? { signal: 'SIGINT' as const, graceMs: 60_000 }
        : c.startsWith('worker-')
          ? { signal: 'SIGTERM' as const, graceMs: 90_000 }
          : { signal: 'SIGTERM' as const, graceMs: 30_000 };
    const outcome = await stopDaemon(record, paths.pid(c), how);
    log(`gymflow cluster: ${c} ${outcome === 'not running' ? 'was not running' : outcome} (pid ${record.pid})`);
  }
}

/** What runs of the cluster in `dir`. */
export function clusterStatus(options: { dir?: string; projectDir?: string } = {}): ClusterStatus {
  const dir = clusterDir(options);
  const paths = clusterPaths(dir);
  const state = readClusterState(dir);
  const s3Endpoint = state?.ports.s3 === undefined ? undefined : `http://${CLUSTER_HOST}:${state.ports.s3}`;
  const address: Partial<Record<ClusterComponent, string>> =
    state === undefined
      ? {}
      : {
          postgres: `${CLUSTER_HOST}:${state.ports.postgres}`,
          ...defined({ 'object-store': s3Endpoint }),
          temporal: `${CLUSTER_HOST}:${state.ports.frontend}`,
          ui: `http://${CLUSTER_HOST}:${state.ports.ui}`,
        };
  const components = CLUSTER_COMPONENTS.map((component): ComponentStatus => {
    const record = readDaemon(paths.pid(component));
    const base = { component, logFile: paths.log(component), ...defined({ address: address[component] }) };
    if (record === undefined) return { ...base, state: 'stopped' };
    return { ...base, state: daemonAlive(record) ? 'running' : 'exited', pid: record.pid };
  });
  return {
    dir,
    created: state !== undefined,
    components,
    ...(state === undefined
      ? {}
      : {
          namespace: state.namespace,
          temporalAddress: address.temporal as string,
          uiUrl: address.ui as string,
          store: state.store ?? CLUSTER_STORE_URL,
          ...defined({ s3Endpoint }),
        }),
  };
}
