/**
 * The configuration files `gymflow cluster` writes for the Temporal server (static and dynamic configuration)
 * and the Web UI server. Pure: values in, objects out; `cluster.ts` writes them as YAML.
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
];

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
  return { rpc: { grpcPort, membershipPort, bindOnIP: CLUSTER_HOST, ...(httpPort === undefined ? {} : { httpPort }) } };
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
