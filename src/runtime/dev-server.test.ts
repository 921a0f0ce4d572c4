import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import { ConfigError } from '../core/errors.js';
import { ensurePortFree, ensureSearchAttributes, freePort, ProcessStartError, startDevServer, startWorkerProcess } from './dev-server.js';
import { runTemporal } from './temporal-cli.js';

const temporal = requires.temporal();

describe('ensurePortFree', () => {
  let busy: Server;
  let port = 0;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    port = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => busy.close(() => r())));

  it('refuses a taken port, naming it and what it was for', async () => {
    await expect(ensurePortFree('127.0.0.1', port, 'Temporal Web UI (--ui-port)')).rejects.toThrow(ConfigError);
    await expect(ensurePortFree('127.0.0.1', port, 'Temporal Web UI (--ui-port)')).rejects.toThrow(
      `Temporal Web UI (--ui-port): port ${port} on 127.0.0.1 is already in use`,
    );
    await expect(ensurePortFree('127.0.0.1', await freePort(), 'x')).resolves.toBeUndefined();
  });
});

temporal.describe('startDevServer', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gymflow-devserver-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('starts, registers search attributes (also on a db file that predates them), stops cleanly', async () => {
    const dbFilename = join(dir, 'state', 'temporal.db');
    const port = await freePort();
    const first = await startDevServer({ dbFilename, port, headless: true, searchAttributes: [{ name: 'GymflowTestA', type: 'Keyword' }] });
    expect(first.address).toBe(`127.0.0.1:${port}`);
    expect(first.uiUrl).toBeUndefined();
    expect((await first.stop()).code).toBe(0);

    // Same db file, one more attribute: start-dev alone would ignore it on an existing db.
    const second = await startDevServer({ dbFilename, port, headless: true, searchAttributes: [{ name: 'GymflowTestA', type: 'Keyword' }, { name: 'GymflowTestB', type: 'Int' }] });
    try {
      const listed = await runTemporal(['operator', 'search-attribute', 'list', '--address', second.address, '--output', 'json']);
      expect(JSON.parse(listed.stdout)).toMatchObject({ customAttributes: { GymflowTestA: 'INDEXED_VALUE_TYPE_KEYWORD', GymflowTestB: 'INDEXED_VALUE_TYPE_INT' } });
      await expect(ensureSearchAttributes(second.address, [{ name: 'GymflowTestB', type: 'Keyword' }])).rejects.toThrow(
        /GymflowTestB exists in namespace default as INDEXED_VALUE_TYPE_INT, expected Keyword/,
      );
      await expect(startDevServer({ dbFilename: join(dir, 'other.db'), port, headless: true })).rejects.toThrow(`port ${port} on 127.0.0.1 is already in use`);
    } finally {
      await second.stop();
    }
  }, 90_000);

  it('a worker that cannot start is reported with its last output', async () => {
    // Nothing listens on port 1: the worker fails to connect and exits.
    const failing = startWorkerProcess({ kind: 'gpu', address: '127.0.0.1:1', readyTimeoutMs: 60_000 });
    await expect(failing).rejects.toBeInstanceOf(ProcessStartError);
    await expect(failing).rejects.toThrow(/gpu worker \(.*workers\/gpu\.ts\) exited during start-up \(code 1/);
  }, 90_000);
});
