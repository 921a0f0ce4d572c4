import { defined } from '../../core/defined.js';
/**
 * The configuration files `gymflow cluster` writes for the Temporal server (static and dynamic configuration)
 * and the Web UI server, and the object store's command line and S3 identity. Pure: values in, objects out;
 * `cluster.ts` writes them as YAML or JSON.
 *
 * Everything binds 127.0.0.1. The server runs its four services (frontend, history, matching, worker) in one
 * process, each on its own gRPC and membership port; its persistence and visibility are two databases of the
 * cluster's PostgreSQL (the `postgres12` plugin, which PostgreSQL 12 and later serve).
 */

/** The cluster's TCP ports, fixed when the cluster is created (the server's membership table records them). */
export interface ClusterPorts {
  readonly postgres: number;
  /** The gRPC frontend clients and workers connect to. */
  readonly frontend: number;
  readonly frontendHttp: number;
  readonly frontendMembership: number;
  readonly history: number;
  readonly historyMembership: number;
  readonly matching: number;
  readonly matchingMembership: number;
  readonly worker: number;
  readonly workerMembership: number;
  /** The Web UI. */
  readonly ui: number;
  /** The object store's S3 gateway (what workers connect to), and SeaweedFS's own listeners behind it. */
  readonly s3: number;
  readonly s3Grpc: number;
  readonly weedMaster: number;
  readonly weedMasterGrpc: number;
  readonly weedVolume: number;
  readonly weedVolumeGrpc: number;
  readonly weedFiler: number;
  readonly weedFilerGrpc: number;
}

/** The names of {@link ClusterPorts}, in the order they are allocated. */
export const CLUSTER_PORT_NAMES: readonly (keyof ClusterPorts)[] = [
  'postgres',
  'frontend',
  'frontendHttp',
  'frontendMembership',
  'history',
  'historyMembership',
  'matching',
  'matchingMembership',
  'worker',
  'workerMembership',
  'ui',
  's3',
  's3Grpc',
  'weedMaster',
  'weedMasterGrpc',
  'weedVolume',
  'weedVolumeGrpc',
  'weedFiler',
  'weedFilerGrpc',
];

/** The object store's ports (a cluster made before the cluster had an object store gets them at its next `up`). */
export const OBJECT_STORE_PORT_NAMES: readonly (keyof ClusterPorts)[] = ['s3', 's3Grpc', 'weedMaster', 'weedMasterGrpc', 'weedVolume', 'weedVolumeGrpc', 'weedFiler', 'weedFilerGrpc'];

/** The interface every port binds to. */
export const CLUSTER_HOST = '127.0.0.1';

/** The PostgreSQL role the server connects as, and its two databases. */
export const POSTGRES_USER = 'temporal';
export const TEMPORAL_DATABASE = 'temporal';
export const VISIBILITY_DATABASE = 'temporal_visibility';

/**
 * History shards: fixed for the life of a cluster's database (the server refuses another count later). Four
 * is plenty for one machine and keeps the per-shard background work small on a few cores.
 */
export const NUM_HISTORY_SHARDS = 4;

/** What {@link temporalServerConfig} needs. */
export interface TemporalServerConfigInput {
  readonly ports: ClusterPorts;
  readonly postgresPassword: string;
  readonly dynamicConfigFile: string;
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

function sqlStore(database: string, input: TemporalServerConfigInput, maxConns: number): Record<string, unknown> {
  return {
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `${CLUSTER_HOST}:${input.ports.postgres}`,
      connectProtocol: 'tcp',
      user: POSTGRES_USER,
      password: input.postgresPassword,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  };
}

function rpc(grpcPort: number, membershipPort: number, httpPort?: number): Record<string, unknown> {
  return { rpc: { grpcPort, membershipPort, bindOnIP: CLUSTER_HOST, ...defined({ httpPort }) } };
}

/**
 * The Temporal server's static configuration (`temporal-server --config-file`), after the server's own
 * `config/development-postgres12.yaml`: no metrics listener, no pprof, archival off.
 */
export function temporalServerConfig(input: TemporalServerConfigInput): Record<string, unknown> {
  const { ports } = input;
  const frontend = `${CLUSTER_HOST}:${ports.frontend}`;
  return {
    log: { stdout: true, level: input.logLevel ?? 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: NUM_HISTORY_SHARDS,
      datastores: {
        'postgres-default': sqlStore(TEMPORAL_DATABASE, input, 20),
        'postgres-visibility': sqlStore(VISIBILITY_DATABASE, input, 4),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: CLUSTER_HOST } },
    services: {
      frontend: rpc(ports.frontend, ports.frontendMembership, ports.frontendHttp),
      history: rpc(ports.history, ports.historyMembership),
      matching: rpc(ports.matching, ports.matchingMembership),
      worker: rpc(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontend, httpAddress: `${CLUSTER_HOST}:${ports.frontendHttp}` },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: { filepath: input.dynamicConfigFile, pollInterval: '10s' },
  };
}

/**
 * The server's dynamic configuration, as its file format wants it (`key: [{ value }]`): the dev server's
 * settings (`DEFAULT_DYNAMIC_CONFIG` in dev-server.ts: eager activities, the transfer queue's read rate), and
 * search attributes read fresh, so that a workflow started right after `cluster up` registered them can set
 * them.
 */
export function temporalDynamicConfig(values: Readonly<Record<string, unknown>>): Record<string, { value: unknown }[]> {
  const all: Record<string, unknown> = { 'system.forceSearchAttributesCacheRefreshOnRead': true, ...values };
  return Object.fromEntries(Object.entries(all).map(([key, value]) => [key, [{ value }]]));
}

/** The Web UI server's configuration (`<root>/config/<env>.yaml` of `temporal-ui-server`). */
export function uiServerConfig(input: { readonly ports: ClusterPorts; readonly namespace: string }): Record<string, unknown> {
  return {
    temporalGrpcAddress: `${CLUSTER_HOST}:${input.ports.frontend}`,
    host: CLUSTER_HOST,
    port: input.ports.ui,
    enableUi: true,
    defaultNamespace: input.namespace,
    // No calls out of the machine.
    disableNewsFetch: true,
    notifyOnNewVersion: false,
    refreshInterval: '0s',
    cors: { allowOrigins: [`http://${CLUSTER_HOST}:${input.ports.ui}`, `http://localhost:${input.ports.ui}`] },
    auth: { enabled: false },
  };
}

/** The S3 identity the cluster's object store accepts and its workers use: one access key, allowed everything. */
export const OBJECT_STORE_ACCESS_KEY = 'gymflow';
/** The bucket and prefix of the cluster's artifact store (the workers' `--store`), on its object store. */
export const CLUSTER_STORE_URL = 's3://gymflow/store';

/** The S3 gateway's identities file (`weed server -s3.config`). */
export function objectStoreIdentities(secretKey: string): Record<string, unknown> {
  return { identities: [{ name: 'gymflow', credentials: [{ accessKey: OBJECT_STORE_ACCESS_KEY, secretKey }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] }] };
}

/**
 * The arguments of `weed server`: one process with SeaweedFS's master, a volume server, the filer and the S3
 * gateway, every listener on 127.0.0.1 and a port of the cluster's, all data under `dataDir` (so it survives a
 * restart), its local sockets in `socketDir`, no telemetry, no Iceberg or Lance gateway.
 */
export function objectStoreArgs(input: { readonly ports: ClusterPorts; readonly dataDir: string; readonly socketDir: string; readonly identitiesFile: string }): string[] {
  const { ports } = input;
  return [
    'server',
    `-ip=${CLUSTER_HOST}`,
    `-ip.bind=${CLUSTER_HOST}`,
    `-dir=${input.dataDir}`,
    `-master.port=${ports.weedMaster}`,
    `-master.port.grpc=${ports.weedMasterGrpc}`,
    '-master.telemetry=false',
    // Volumes of 1 GiB (the default 30 GiB preallocates more than a small disk holds); as many as the disk takes.
    '-master.volumeSizeLimitMB=1024',
    `-volume.port=${ports.weedVolume}`,
    `-volume.port.grpc=${ports.weedVolumeGrpc}`,
    '-volume.max=0',
    '-filer',
    `-filer.port=${ports.weedFiler}`,
    `-filer.port.grpc=${ports.weedFilerGrpc}`,
    `-filer.localSocket=${input.socketDir}/filer.sock`,
    '-s3',
    `-s3.port=${ports.s3}`,
    `-s3.port.grpc=${ports.s3Grpc}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.localSocket=${input.socketDir}/s3.sock`,
    `-s3.config=${input.identitiesFile}`,
  ];
}
