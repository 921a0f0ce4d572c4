import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionOptions, temporalTarget } from './temporal-target.js';

describe('temporalTarget', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gymflow-target-'));
    await writeFile(path.join(dir, 'client.pem'), 'CERT');
    await writeFile(path.join(dir, 'client.key'), 'KEY');
    await writeFile(path.join(dir, 'ca.pem'), 'CA');
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('takes the options, then the environment, then the local defaults; plain TCP unless told', () => {
    expect(temporalTarget({}, {})).toEqual({ address: '127.0.0.1:7233', namespace: 'default' });
    expect(temporalTarget({}, { TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_NAMESPACE: 'research', TEMPORAL_TLS: '' })).toEqual({ address: 'temporal:7233', namespace: 'research' });
    expect(temporalTarget({ address: 'a:1', namespace: 'n' }, { TEMPORAL_ADDRESS: 'temporal:7233' })).toEqual({ address: 'a:1', namespace: 'n' });
    expect(temporalTarget({}, { TEMPORAL_TLS: 'true' }).tls).toBe(true);
  });

  it('connects Temporal Cloud with an API key over TLS', () => {
    const target = temporalTarget({}, { TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct', TEMPORAL_API_KEY: 'secret' });
    expect(connectionOptions(target)).toEqual({ address: 'ns.acct.tmprl.cloud:7233', tls: true, apiKey: 'secret' });
  });

  it('reads the mTLS certificate, key and CA files, and the server name', () => {
    const target = temporalTarget({}, {
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key'),
      TEMPORAL_TLS_CA_PATH: path.join(dir, 'ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    expect(target.tls).toEqual({ clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') }, serverRootCACertificate: Buffer.from('CA'), serverNameOverride: 'temporal.internal' });
  });

  it('names the variable of a missing file, a certificate without its key, and a bad flag', () => {
    expect(() => temporalTarget({}, { TEMPORAL_TLS_CA_PATH: path.join(dir, 'nope.pem') })).toThrow(`TEMPORAL_TLS_CA_PATH=${path.join(dir, 'nope.pem')}: cannot read it (ENOENT)`);
    expect(() => temporalTarget({}, { TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem') })).toThrow('TEMPORAL_TLS_CLIENT_CERT_PATH is set without TEMPORAL_TLS_CLIENT_KEY_PATH');
    expect(() => temporalTarget({}, { TEMPORAL_TLS: 'maybe' })).toThrow("TEMPORAL_TLS='maybe': expected true or false");
  });
});
