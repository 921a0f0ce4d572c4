import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { ConfigError } from '../core/errors.js';
import { defined } from '../core/defined.js';

/**
 * Where a gymflow client or worker connects, and how: the frontend address, the namespace and, for a server
 * behind TLS (Temporal Cloud, a cluster with mTLS), the TLS settings and API key. Read from the options, then
 * the environment, under the names the `temporal` CLI reads too, so one set of variables serves both:
 *
 * | variable | default | meaning |
 * | --- | --- | --- |
 * | `TEMPORAL_ADDRESS` | `127.0.0.1:7233` | frontend `host:port` |
 * | `TEMPORAL_NAMESPACE` | `default` | namespace |
 * | `TEMPORAL_API_KEY` | | API key (Temporal Cloud); implies TLS |
 * | `TEMPORAL_TLS` | `false` | `true` connects with TLS (implied by any other TLS variable) |
 * | `TEMPORAL_TLS_CLIENT_CERT_PATH`, `TEMPORAL_TLS_CLIENT_KEY_PATH` | | mTLS client certificate and key (PEM files; both or neither) |
 * | `TEMPORAL_TLS_CA_PATH` | | CA certificate the server's is checked against (default: the system's) |
 * | `TEMPORAL_TLS_SERVER_NAME` | | server name (SNI) to check instead of the address's host |
 */
export interface TemporalTarget {
  address: string;
  namespace: string;
  /** Absent: plain TCP; `true`: TLS with the system's CAs; an object: TLS with these settings. */
  tls?: TLSConfig | true;
  apiKey?: string;
}

/** The variables of {@link TemporalTarget}, in the order its table lists them. */
export const TEMPORAL_ENV = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CA_PATH',
  'TEMPORAL_TLS_SERVER_NAME',
] as const;

function readPem(variable: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${variable}=${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

function flag(variable: string, value: string | undefined): boolean {
  if (value === undefined || value === '') return false;
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new ConfigError(`${variable}='${value}': expected true or false`);
}

/**
 * The target from `options` (a command line's `--address`, `--namespace`), else the environment (see
 * {@link TemporalTarget}). Certificate files are read here, so a missing one fails before any connection.
 *
 * @throws ConfigError naming the variable: an unreadable file, a certificate without its key, a bad flag.
 */
export function temporalTarget(options: { address?: string | undefined; namespace?: string | undefined } = {}, env: NodeJS.ProcessEnv = process.env): TemporalTarget {
  const get = (name: (typeof TEMPORAL_ENV)[number]): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const target: TemporalTarget = {
    address: options.address ?? get('TEMPORAL_ADDRESS') ?? '127.0.0.1:7233',
    namespace: options.namespace ?? get('TEMPORAL_NAMESPACE') ?? 'default',
  };
  const apiKey = get('TEMPORAL_API_KEY');
  const cert = get('TEMPORAL_TLS_CLIENT_CERT_PATH');
  const key = get('TEMPORAL_TLS_CLIENT_KEY_PATH');
  const ca = get('TEMPORAL_TLS_CA_PATH');
  const serverName = get('TEMPORAL_TLS_SERVER_NAME');
  if ((cert === undefined) !== (key === undefined)) {
    throw new ConfigError(`${cert === undefined ? 'TEMPORAL_TLS_CLIENT_KEY_PATH' : 'TEMPORAL_TLS_CLIENT_CERT_PATH'} is set without ${cert === undefined ? 'TEMPORAL_TLS_CLIENT_CERT_PATH' : 'TEMPORAL_TLS_CLIENT_KEY_PATH'}: mTLS needs the certificate and its key`);
  }
  const tls: TLSConfig = {
    ...(cert !== undefined && key !== undefined ? { clientCertPair: { crt: readPem('TEMPORAL_TLS_CLIENT_CERT_PATH', cert), key: readPem('TEMPORAL_TLS_CLIENT_KEY_PATH', key) } } : {}),
    ...defined({ serverRootCACertificate: ca === undefined ? undefined : readPem('TEMPORAL_TLS_CA_PATH', ca), serverNameOverride: serverName }),
  };
  if (Object.keys(tls).length > 0) target.tls = tls;
  else if (flag('TEMPORAL_TLS', get('TEMPORAL_TLS')) || apiKey !== undefined) target.tls = true;
  if (apiKey !== undefined) target.apiKey = apiKey;
  return target;
}

/** The connection options of a target (address, TLS, API key) for `Connection.connect` / `NativeConnection.connect`. */
export function connectionOptions(target: TemporalTarget): { address: string; tls?: TLSConfig | true; apiKey?: string } {
  return { address: target.address, ...defined({ tls: target.tls, apiKey: target.apiKey }) };
}

/**
 * gRPC channel settings of gymflow's client connections (the CLI, `--wait`, the MCP server, the soak's prober): after
 * the server was down, gRPC waits between reconnection attempts up to 120 s by default, growing from 1 s, so a status
 * query just after a restart waited seconds for a server that was already back. At most 1 s between attempts costs one
 * connection attempt a second while the server is down.
 */
export const CLIENT_CHANNEL_ARGS = { 'grpc.initial_reconnect_backoff_ms': 250, 'grpc.max_reconnect_backoff_ms': 1000 } as const;

/** {@link connectionOptions} for a client `Connection`: with {@link CLIENT_CHANNEL_ARGS} and a 5 s connect timeout. */
export function clientConnectionOptions(target: TemporalTarget): ReturnType<typeof connectionOptions> & { channelArgs: Record<string, number>; connectTimeout: string } {
  return { ...connectionOptions(target), channelArgs: { ...CLIENT_CHANNEL_ARGS }, connectTimeout: '5s' };
}
