/**
 * `pipeline_status` as `gymflow pipeline status`, `pipeline start --wait` and the MCP server ask it (`askStatus`),
 * against a real dev server: no worker gives its message after the timeout; a server that stopped gives a clear
 * error fast, not after the timeout (the client's gRPC retries would otherwise keep the query waiting).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect } from 'vitest';
import { askStatus, STATUS_REACHABILITY_CHECK } from '../src/cli/commands/pipeline.js';
import { freePort, startDevServer, type DevServer } from '../src/runtime/dev-server.js';
import { requires } from './support/requires.js';

const temporal = requires.temporal();

temporal.describe('pipeline_status when no worker or no server answers', () => {
  let dir = '';
  let server: DevServer | undefined;
  let connection: Connection | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gymflow-status-outage-'));
    server = await startDevServer({ dbFilename: join(dir, 'temporal.db'), port: await freePort(), headless: true });
    connection = await Connection.connect({ address: server.address });
  }, 120_000);

  afterAll(async () => {
    await connection?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  temporal.it('says no worker answered after the timeout, and that the server is not answering within ~1.5 s once it stopped', async () => {
    if (!connection || !server) throw new Error('no server');
    const client = new Client({ connection });
    // A run on a task queue nobody polls: the query waits for a worker that never comes.
    await client.workflow.start('trainingLoop', { taskQueue: 'nobody-polls-this', workflowId: 'status-outage', args: [] });
    const noWorker = await askStatus(client, 'status-outage', 2000, 'nobody-polls-this');
    expect(noWorker.problem).toBe('no worker answered the pipeline_status query within 2 s: is a worker polling task queue nobody-polls-this?');

    expect((await server.stop()).code).toBe(0);
    const started = performance.now();
    const down = await askStatus(client, 'status-outage', 15_000);
    const ms = performance.now() - started;
    expect(down.problem).toMatch(new RegExp(`^the Temporal server at ${server.address.replaceAll('.', '\\.')} is not answering \\(`));
    // The reachability check starts after 0.5 s and gives up after 1 s more; far from the 15 s timeout.
    expect(ms).toBeLessThan(STATUS_REACHABILITY_CHECK.afterMs + STATUS_REACHABILITY_CHECK.timeoutMs + 1500);
  }, 120_000);
});
