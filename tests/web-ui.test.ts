/**
 * The Temporal Web UI in a real browser (puppeteer-core driving Debian's Chromium), while a pipeline runs: a small
 * training loop on real workers (the CPU worker and the GPU worker with the real Python trainer) is started the way
 * `gymflow pipeline start` starts it, paused while it trains, and read once its training is done (a paused loop is
 * a running workflow that waits at its next stage, so what the UI shows does not race the loop). In the browser:
 *
 * 1. the workflow list filtered by `GymflowExperiment = "<experiment>"` has the run; its link opens it;
 * 2. the timeline shows the activities' summaries (`iter 1 · collect shard 1/2 · gymflow/tool-use-v0`, …) and the
 *    User Metadata tab the run's summary (`trainingLoop <experiment> · gymflow/tool-use-v0 · 2 iterations`) and its
 *    current details (`iteration 1 of 2 · paused before the next stage · run 1`);
 * 3. the Queries tab runs `pipeline_status` and shows its JSON: the experiment, the stage and the paused state.
 *
 * By default the UI is the dev server's, started here with the UI on (as `gymflow dev` does). To run it against
 * another server and its UI (a cluster's ui-server), set `GYMFLOW_WEB_UI_URL` (the UI's base URL),
 * `GYMFLOW_WEB_UI_ADDRESS` (the Temporal frontend, host:port) and optionally `GYMFLOW_WEB_UI_NAMESPACE` (default
 * `default`; gymflow's search attributes must be registered there). The test's workers poll task queues of their own,
 * so workers already serving that server are not disturbed. `GYMFLOW_SCREENSHOT_DIR=docs/images` rewrites the
 * screenshots that docs/operations.md shows (the timeline, and the Queries tab with `pipeline_status`).
 * tests/cluster.test.ts takes the same steps (tests/support/web-ui.ts) on the cluster's own ui-server.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startPipeline } from '../src/cli/commands/pipeline.js';
import { defined } from '../src/core/defined.js';
import { SEARCH_ATTRIBUTES } from '../src/loop/search-attributes.js';
import { pipelineSummary } from '../src/loop/summaries.js';
import { freePort, startDevServer, startWorkerProcess, type DevServer, type WorkerProcess } from '../src/runtime/dev-server.js';
import { requires, skipMissing } from './support/requires.js';
import { smallLoopConfig } from './support/small-loop.js';
import { checkRunInWebUi, holdAfterTraining, launchChromium } from './support/web-ui.js';

const temporal = requires.temporal();
const python = requires.python(['torch', 'gymflow_trainer']);
const chromium = requires.chromium();

temporal.describe('the Web UI in a real browser', () => {
  const external = process.env['GYMFLOW_WEB_UI_URL'];
  const namespace = process.env['GYMFLOW_WEB_UI_NAMESPACE'] ?? 'default';
  const suffix = randomBytes(3).toString('hex');
  const queues = { cpu: `webui-${suffix}`, gpu: `webui-${suffix}-gpu` };
  let dir = '';
  let server: DevServer | undefined;
  let uiUrl = '';
  let workers: WorkerProcess[] = [];
  let connection: Connection | undefined;
  let client: Client;
  let browser: Browser | undefined;
  let workflowId: string | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gymflow-webui-'));
    let address: string;
    if (external !== undefined) {
      address = process.env['GYMFLOW_WEB_UI_ADDRESS'] ?? '';
      if (address === '') throw new Error('GYMFLOW_WEB_UI_URL is set but GYMFLOW_WEB_UI_ADDRESS (the Temporal frontend of that UI, host:port) is not');
      uiUrl = external.replace(/\/+$/, '');
    } else {
      server = await startDevServer({
        dbFilename: join(dir, 'temporal.db'),
        port: await freePort(),
        uiPort: await freePort(),
        searchAttributes: SEARCH_ATTRIBUTES,
        logFile: join(dir, 'temporal.log'),
      });
      address = server.address;
      uiUrl = server.uiUrl ?? '';
    }
    if (!python.available || !chromium.available) return;
    workers = await Promise.all(
      (['cpu', 'gpu'] as const).map((kind) =>
        startWorkerProcess({ kind, address, namespace, taskQueue: queues[kind], store: join(dir, 'store'), logFile: join(dir, `${kind}.log`) }),
      ),
    );
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace });
    browser = await launchChromium();
  }, 300_000);

  afterAll(async () => {
    if (workflowId !== undefined) await client.workflow.getHandle(workflowId).terminate('web UI test done').catch(() => undefined);
    await browser?.close();
    await connection?.close();
    await Promise.all(workers.map((w) => w.stop(20_000)));
    await server?.stop();
    // GYMFLOW_KEEP_TEST_DIR=1 keeps the scratch directory (worker and server logs) for a post-mortem.
    if (dir && !process.env['GYMFLOW_KEEP_TEST_DIR']) await rm(dir, { recursive: true, force: true });
    else if (dir) console.warn(`kept ${dir}`);
  }, 120_000);

  chromium.it(
    `finds a running loop by GymflowExperiment, shows its summaries and reads pipeline_status from the Queries tab ${python.tag}`,
    async (ctx) => {
      if (!python.available) skipMissing(ctx, 'python', python.reason ?? 'missing');
      const experiment = `webui-${suffix}`;
      const config = {
        ...smallLoopConfig(experiment, dir, 'web-ui.test', {
          collect: { tasks: 8, shard_size: 4, concurrency: 2 },
          train: { config: { epochs: 1, batch_size: 2, max_length: 512, save_every: 100, log_every: 1 } },
          max_iterations: 2,
        }),
        task_queues: queues,
      };
      const started = await startPipeline(client, config);
      workflowId = started.workflowId;
      // Paused once its training is done (tasks, collect, reward, export and train are in the history).
      await holdAfterTraining(started.handle);

      const summary = pipelineSummary('trainingLoop', config);
      expect(summary).toBe(`trainingLoop ${experiment} · gymflow/tool-use-v0 · 2 iterations`);
      const shown = await checkRunInWebUi(browser as Browser, { uiUrl, namespace, experiment, workflowId: started.workflowId }, {
        timeline: [`iter 1 · collect shard 1/2 · ${config.env}`, `iter 1 · collect shard 2/2 · ${config.env}`, `iter 1 · train sft · ${config.env}`],
        summary,
        details: 'iteration 1 of 2 · paused before the next stage · run 1',
        status: [`"experiment": "${experiment}"`, '"workflow": "trainingLoop"', `"env": "${config.env}"`, '"state": "paused"', '"stage": "train"', '"iteration": 1'],
        ...defined({ screenshots: process.env['GYMFLOW_SCREENSHOT_DIR'] }),
      });
      expect(shown).toContain('"state": "paused"');
    },
    600_000,
  );
});
