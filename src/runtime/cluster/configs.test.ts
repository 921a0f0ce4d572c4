import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import { SEAWEEDFS_VERSION, TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from './binaries.js';
import { CLUSTER_PORT_NAMES, OBJECT_STORE_PORT_NAMES, objectStoreArgs, objectStoreIdentities, temporalDynamicConfig, temporalServerConfig, uiServerConfig, type ClusterPorts } from './configs.js';

const ports = Object.fromEntries(CLUSTER_PORT_NAMES.map((name, i) => [name, 20_000 + i])) as unknown as ClusterPorts;

describe('cluster configuration files', () => {
  it('the server binds each service to 127.0.0.1 on its own ports and keeps its state in the two PostgreSQL databases', () => {
    const config = temporalServerConfig({ ports, postgresPassword: 'pw', dynamicConfigFile: '/x/dc.yaml' }) as {
      services: Record<string, { rpc: { grpcPort: number; membershipPort: number; bindOnIP: string } }>;
      persistence: { datastores: Record<string, { sql: { databaseName: string; connectAddr: string; pluginName: string; password: string } }> };
      global: Record<string, unknown>;
    };
    expect(Object.keys(config.services)).toEqual(['frontend', 'history', 'matching', 'worker']);
    for (const service of Object.values(config.services)) expect(service.rpc.bindOnIP).toBe('127.0.0.1');
    expect(config.services['frontend']?.rpc.grpcPort).toBe(ports.frontend);
    expect(config.services['history']?.rpc.membershipPort).toBe(ports.historyMembership);
    const stores = Object.values(config.persistence.datastores).map((d) => d.sql);
    expect(stores.map((s) => s.databaseName)).toEqual(['temporal', 'temporal_visibility']);
    for (const s of stores) expect(s).toMatchObject({ pluginName: 'postgres12', connectAddr: `127.0.0.1:${ports.postgres}`, password: 'pw' });
    // No listener beyond the services': no metrics endpoint, no pprof.
    expect(config.global).not.toHaveProperty('metrics');
    expect(config.global).not.toHaveProperty('pprof');
  });

  it('dynamic configuration in the server file format; the UI talks to the frontend and listens on 127.0.0.1', () => {
    expect(temporalDynamicConfig({ 'system.enableActivityEagerExecution': true })).toEqual({
      'system.forceSearchAttributesCacheRefreshOnRead': [{ value: true }],
      'system.enableActivityEagerExecution': [{ value: true }],
    });
    expect(uiServerConfig({ ports, namespace: 'ns' })).toMatchObject({ temporalGrpcAddress: `127.0.0.1:${ports.frontend}`, host: '127.0.0.1', port: ports.ui, defaultNamespace: 'ns' });
  });

  it('runs the versions scripts/build-temporal-server.sh builds', () => {
    const script = readFileSync(join(PACKAGE_ROOT, 'scripts', 'build-temporal-server.sh'), 'utf8');
    expect(script).toContain(`TEMPORAL_VERSION=${TEMPORAL_SERVER_VERSION}\n`);
    expect(script).toContain(`UI_VERSION=${TEMPORAL_UI_VERSION}\n`);
    expect(readFileSync(join(PACKAGE_ROOT, 'scripts', 'build-seaweedfs.sh'), 'utf8')).toContain(`SEAWEEDFS_VERSION=${SEAWEEDFS_VERSION}\n`);
  });

  it('the object store binds 127.0.0.1 on the cluster\'s ports, keeps its data in the cluster and takes one identity', () => {
    const args = objectStoreArgs({ ports, dataDir: '/c/object-store/data', socketDir: '/c/run', identitiesFile: '/c/object-store/s3.json' });
    expect(args[0]).toBe('server');
    expect(args).toEqual(expect.arrayContaining(['-ip=127.0.0.1', '-ip.bind=127.0.0.1', '-dir=/c/object-store/data', '-s3', '-filer', '-s3.config=/c/object-store/s3.json', '-master.telemetry=false']));
    // Every listener on a port of the cluster's (none left to its default, which another SeaweedFS may hold), each once.
    const numbers = args.flatMap((a) => (/^-[\w.]*port[\w.]*=(\d+)$/.exec(a)?.[1] ? [Number(/=(\d+)$/.exec(a)?.[1])] : []));
    expect(numbers.filter((n) => n !== 0).sort()).toEqual(OBJECT_STORE_PORT_NAMES.map((n) => ports[n]).sort());
    expect(args.filter((a) => a.endsWith('.sock')).every((a) => a.includes('=/c/run/'))).toBe(true);
    expect(objectStoreIdentities('s3cret')).toEqual({
      identities: [{ name: 'gymflow', credentials: [{ accessKey: 'gymflow', secretKey: 's3cret' }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] }],
    });
  });
});
