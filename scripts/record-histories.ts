/**
 * Records the event histories that `tests/pipeline-replay.test.ts` replays against the current workflow
 * code, into `tests/histories/<name>.json` (the format of `temporal workflow show --output json`).
 *
 * It starts a dev server and the real CPU and GPU workers (child processes) in a scratch directory, runs
 *   - `trainingLoop-smoke`: examples/smoke.yaml — baseline evaluation, then SFT, ONNX export and evaluation
 *     of the trained policy (two runs of the loop: it continues as new after the baseline; each run is a file);
 *   - `pipeline-pass`: one `pipeline` pass of a small SFT configuration;
 *   - `trainingLoop-signals`: a loop that is paused, resumed, then cancelled (`finish`) — the signal paths;
 * and writes every run's history. Takes a few minutes on 2 cores.
 *
 * Re-record only for a change that is *meant* to alter histories and is guarded by `patched()` (see
 * docs/operations.md §7): re-recording to silence a replay failure hides a break of every run in flight.
 *
 * Usage: `npx tsx scripts/record-histories.ts [--out tests/histories]`
 */
import { mkdir, mkdtemp, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { PipelineConfig } from '../src/loop/config.js';
import { loadPipelineConfig } from '../src/runtime/config-file.js';
import { freePort, startDevServer, startWorkerProcess, type WorkerProcess } from '../src/runtime/dev-server.js';
import { SEARCH_ATTRIBUTES } from '../src/loop/search-attributes.js';
import { runTemporal } from '../src/runtime/temporal-cli.js';
import { cancelSignal, pauseSignal, pipelineStatusQuery, resumeSignal } from '../workflows/messages.js';
import { pipeline, trainingLoop } from '../workflows/index.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { smallLoopConfig } from '../tests/support/small-loop.js';

/** A small SFT loop: two iterations of two training steps each. */
function smallConfig(name: string, work: string): PipelineConfig {
  return smallLoopConfig(name, work, `record-histories:${name}`, {
    collect: { tasks: 4, shard_size: 2, concurrency: 2 },
    train: { config: { max_steps: 2, batch_size: 2, max_length: 256 } },
    max_iterations: 2,
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(PACKAGE_ROOT, 'tests', 'histories') } } });
  const out = resolve(values.out);
  const work = await mkdtemp(join(tmpdir(), 'gymflow-record-'));
  const server = await startDevServer({ dbFilename: join(work, 'temporal.db'), port: await freePort(), headless: true, searchAttributes: SEARCH_ATTRIBUTES });
  const workers: WorkerProcess[] = [];
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const recorded: string[] = [];

  /** Writes every run of the workflow `id` (first run, then each continued-as-new run) as `<name>[-run<k>].json`. */
  const record = async (name: string, handle: WorkflowHandle): Promise<void> => {
    const runs: string[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowId = "${handle.workflowId}"` })) runs.push(w.runId);
    const described = await Promise.all(runs.map(async (runId) => ({ runId, start: (await client.workflow.getHandle(handle.workflowId, runId).describe()).startTime })));
    described.sort((a, b) => a.start.getTime() - b.start.getTime());
    for (const [k, { runId }] of described.entries()) {
      const shown = await runTemporal(['workflow', 'show', '--address', server.address, '--workflow-id', handle.workflowId, '--run-id', runId, '--output', 'json']);
      const file = join(out, `${name}${described.length > 1 ? `-run${k + 1}` : ''}.json`);
      await writeFile(file, `${JSON.stringify(JSON.parse(shown.stdout), null, 1)}\n`);
      recorded.push(file);
      console.log(`recorded ${handle.workflowId} run ${runId} -> ${file}`);
    }
  };

  try {
    workers.push(
      ...(await Promise.all(
        (['cpu', 'gpu'] as const).map((kind) =>
          startWorkerProcess({ kind, address: server.address, store: join(work, 'store'), logFile: join(work, `${kind}.log`) }),
        ),
      )),
    );
    await mkdir(out, { recursive: true });
    for (const f of await readdir(out)) if (f.endsWith('.json')) await unlink(join(out, f));

    const smoke = await loadPipelineConfig(join(PACKAGE_ROOT, 'examples', 'smoke.yaml'));
    const smokeRun = await client.workflow.start(trainingLoop, {
      taskQueue: smoke.task_queues.cpu,
      workflowId: 'record-smoke',
      args: [{ ...smoke, store: join(work, 'store'), work_dir: join(work, 'work') }],
    });
    console.log('running examples/smoke.yaml (a minute or two)…');
    await smokeRun.result();
    await record('trainingLoop-smoke', smokeRun);

    const pass = await client.workflow.start(pipeline, { taskQueue: 'gymflow', workflowId: 'record-pass', args: [smallConfig('record-pass', work)] });
    await pass.result();
    await record('pipeline-pass', pass);

    const steered = await client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: 'record-signals', args: [smallConfig('record-signals', work)] });
    await steered.signal(pauseSignal);
    // Let it reach the gate and wait there, so the history has the paused state in it.
    for (let i = 0; i < 100 && (await steered.query(pipelineStatusQuery)).state !== 'paused'; i++) await new Promise((r) => setTimeout(r, 200));
    await steered.signal(resumeSignal);
    await steered.signal(cancelSignal, { mode: 'finish', reason: 'recorded' });
    await steered.result();
    await record('trainingLoop-signals', steered);
    console.log(`\n${recorded.length} histories in ${out}`);
  } finally {
    await connection.close();
    await Promise.all(workers.map((w) => w.stop(30_000)));
    await server.stop();
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
