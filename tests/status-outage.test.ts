/**
 * `pipeline_status` as `gymflow pipeline status`, `pipeline start --wait` and the MCP server ask it (`askStatus`),
 * against a real dev server: the CPU worker split in two processes (`--role workflows`, `--role activities`) answers
 * from the workflow process while the activity process is down; no worker gives its message after the timeout; a
 * server that stopped gives a clear error fast, not after the timeout (the client's gRPC retries would otherwise
 * keep the query waiting).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect } from 'vitest';
import { askStatus, STATUS_REACHABILITY_CHECK } from '../src/cli/commands/pipeline.js';
import { SEARCH_ATTRIBUTES } from '../src/loop/search-attributes.js';
import { builtWorkerProgram, freePort, startDevServer, startWorkerProcess, type DevServer, type WorkerRole } from '../src/runtime/dev-server.js';
import { trainingLoop } from '../workflows/index.js';
import { requires } from './support/requires.js';
import { smallLoopConfig } from './support/small-loop.js';
import { until } from './support/until.js';

const temporal = requires.temporal();

temporal.describe('pipeline_status when no worker or no server answers', () => {
  let dir = '';
  let server: DevServer | undefined;
  let connection: Connection | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gymflow-status-outage-'));
    server = await startDevServer({ dbFilename: join(dir, 'temporal.db'), port: await freePort(), headless: true, searchAttributes: SEARCH_ATTRIBUTES });
    connection = await Connection.connect({ address: server.address });
  }, 120_000);

  afterAll(async () => {
    await connection?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  temporal.it('a workflows-only worker answers while the activities-only worker runs the activities, and while it is down', async () => {
    if (!connection || !server) throw new Error('no server');
    const client = new Client({ connection });
    const address = server.address;
    const start = (role: WorkerRole) =>
      startWorkerProcess({ kind: 'cpu', role, program: builtWorkerProgram('cpu'), address, store: join(dir, 'store'), logFile: join(dir, `${role}.log`) });
    const lines: string[] = [];
    let workflows = await startWorkerProcess({ kind: 'cpu', role: 'workflows', program: builtWorkerProgram('cpu'), address, store: join(dir, 'store'), onLine: (l) => lines.push(l) });
    try {
      expect(lines.join('\n')).toMatch(/gymflow worker ready: queue=gymflow role=workflows address=/);
      const id = 'split-roles';
      const config = smallLoopConfig('split', dir, 'status-outage:split', { collect: { tasks: 2, shard_size: 2, concurrency: 1 }, train: {}, max_iterations: 1 });
      const handle = await client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [config] });
      const completedActivities = async (): Promise<number> =>
        ((await handle.fetchHistory()).events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).length;
      // The workflow process answers, but runs no activity: the run waits at its first one.
      expect((await askStatus(client, id, 10_000)).status).toMatchObject({ state: expect.stringMatching(/starting|running/) as unknown, stage: 'setup' });
      const activities = await start('activities');
      await until('an activity to complete on the activities-only worker', 60_000, async () => ((await completedActivities()) > 0 ? true : undefined));
      // kill -9 of the activity process: the workflow process still answers, with no replay.
      await activities.kill();
      const answer = await askStatus(client, id, 10_000);
      expect(answer.problem).toBeUndefined();
      expect(answer.status?.workflow).toBe('trainingLoop');
      // kill -9 of the workflow process: the run is cached ("sticky") in the dead worker; the server hands its next
      // query to the new worker after the workflows role's 2 s sticky timeout (at the SDK's default of 10 s, this 6 s
      // query would go unanswered).
      await workflows.kill();
      workflows = await start('workflows');
      const afterCrash = await askStatus(client, id, 6_000);
      expect(afterCrash.problem).toBeUndefined();
      expect(afterCrash.status?.workflow).toBe('trainingLoop');
      await handle.terminate('test over');
    } finally {
      await workflows.stop(20_000);
    }
  }, 180_000);

  temporal.it('says no worker answered after the timeout, and that the server is not answering within ~1.25 s once it stopped', async () => {
    if (!connection || !server) throw new Error('no server');
    const client = new Client({ connection });
    // A run on a task queue nobody polls: the query waits for a worker that never comes.
    await client.workflow.start('trainingLoop', { taskQueue: 'nobody-polls-this', workflowId: 'status-outage', args: [] });
    const noWorker = await askStatus(client, 'status-outage', 2000, 'nobody-polls-this');
    expect(noWorker.problem).toBe('no worker answered the pipeline_status query within 2 s: is a worker polling task queue nobody-polls-this?');

    expect((await server.stop()).code).toBe(0);
    const started = performance.now();
    const timeoutMs = 5_000;
    const down = await askStatus(client, 'status-outage', timeoutMs);
    const ms = performance.now() - started;
    expect(down.problem).toMatch(new RegExp(`^the Temporal server at ${server.address.replaceAll('.', '\\.')} is not answering \\(`));
    // The reachability check starts after 0.25 s and gives up after 1 s more; far from the 5 s timeout.
    expect(ms).toBeLessThan(STATUS_REACHABILITY_CHECK.afterMs + STATUS_REACHABILITY_CHECK.timeoutMs + 1500);
    // The aborted query's call may still have a retry timer of the SDK's gRPC interceptor pending (up to 6 s apart, each
    // ending at the query's deadline while the server is down); one that fires after afterAll closed the connection
    // throws "Channel has been shut down" from the timer, an uncaught exception (CI, 2026-12-06). Wait them out.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, timeoutMs + 6_500 - (performance.now() - started))));
  }, 120_000);
});
