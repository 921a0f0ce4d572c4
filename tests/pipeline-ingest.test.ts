/**
 * `gymflow pipeline ingest`: a directory of real agent logs (the shared fixtures) through the `ingest` workflow on a
 * dev server with a CPU worker — convert, validate, score, export, each an activity — with a log no adapter reads
 * rejected by file and the others going on; a second run adds nothing and says so; on a Temporal Schedule, a run
 * takes only the file added since.
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { ArtifactStore } from '../src/hub/store/store.js';
import { loadTrajectories } from '../src/hub/store/trajectory-set.js';
import { ingestRefName, type IngestStatus } from '../src/loop/ingest.js';
import { runWorker as runCpuWorker } from '../workers/cpu.js';
import { gymflowAsync } from './support/cli.js';
import { requires } from './support/requires.js';
import { useLocalTemporal } from './support/temporal.js';

const temporal = requires.temporal();
const FIXTURES = process.env['GYMFLOW_FIXTURES'] ?? path.join(import.meta.dirname, '..', '..', 'shared', 'fixtures', 'agent-logs');

temporal.describe('pipeline ingest on a dev server', () => {
  const local = useLocalTemporal('gymflow-ingest-');
  const queue = `gymflow-ingest-${randomUUID()}`;
  const stop = new AbortController();
  let worker: Promise<unknown> | undefined;
  let dir = '';
  let logs = '';
  let store = '';

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gymflow-ingest-test-'));
    logs = path.join(dir, 'logs');
    store = path.join(dir, 'store');
    await mkdir(path.join(logs, 'swe'), { recursive: true });
    await copyFile(path.join(FIXTURES, 'swe-agent', 'v1-fc-testrepo-1c2844.traj'), path.join(logs, 'swe', 'run-1.traj'));
    await copyFile(path.join(FIXTURES, 'mini-swe-agent', 'v1-text-deterministic-test-output.traj.json'), path.join(logs, 'mini.traj.json'));
    // A SWE-agent log with one malformed step: converted, its problem named by JSON path.
    await writeFile(path.join(logs, 'swe', 'broken.traj'), `${JSON.stringify({ environment: 'x', trajectory: [{ action: 5 }], history: [], info: {} })}\n`);
    // Not an agent log at all: rejected.
    await writeFile(path.join(logs, 'notes.txt'), 'these are my notes, not a log\n');
    const env = local().env;
    worker = runCpuWorker({ connection: env.nativeConnection, namespace: env.namespace ?? 'default', taskQueue: queue, signal: stop.signal, store, workDir: path.join(dir, 'work'), log: () => undefined });
    worker.catch(() => undefined);
  });

  afterAll(async () => {
    stop.abort();
    await worker?.catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const ingest = async (...extra: string[]): Promise<Record<string, unknown>> => {
    const r = await gymflowAsync(['pipeline', 'ingest', logs, '--name', 'fixtures', '--domain', 'coding', '--store', store, '--task-queue', queue, '--address', local().server.address, '--json', ...extra], { timeoutMs: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  temporal.it('converts, validates, scores and exports the new logs; a bad log is rejected by name and the others go on; a second run adds nothing', async () => {
    const first = (await ingest('--wait')).status as IngestStatus;
    expect(first).toMatchObject({ state: 'completed', stage: 'done', files: { found: 4, known: 0, new: 4 }, converted: { files: 3, trajectories: 3 }, rejected: { files: 1 }, scored: 3, exported: 2 });
    // Exported: the two runs with steps (the broken log's only step was skipped, so it has nothing to imitate).
    expect(first.rejected.first).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: path.join(logs, 'notes.txt'), path: '$', message: expect.stringMatching(/not a recognised agent log/) }),
        expect.objectContaining({ file: path.join(logs, 'swe', 'broken.traj'), path: '$.trajectory[0].action', message: expect.stringMatching(/expected a string/) }),
      ]),
    );
    const s = await ArtifactStore.open({ root: store });
    const scored = await loadTrajectories(s, await s.resolve(ingestRefName('fixtures', 'scored')));
    expect(scored).toHaveLength(3);
    expect(scored.every((t) => t.reward !== undefined)).toBe(true);
    // The dataset descends from the scored set, which descends from the converted one.
    expect((await s.stat(first.refs.dataset as string)).parents).toEqual([first.refs.scored]);
    expect((await s.stat(first.refs.scored as string)).parents).toEqual([first.refs.trajectories]);

    const second = (await ingest('--wait')).status as IngestStatus;
    expect(second).toMatchObject({ state: 'completed', files: { found: 4, known: 4, new: 0 }, converted: { files: 0 }, note: expect.stringMatching(/^nothing new: 4 files/) });
    expect(second.refs).toEqual({});
  });

  temporal.it('on a schedule, a run takes only the file added since', async () => {
    await copyFile(path.join(FIXTURES, 'swe-agent', 'demo-history-only-function-calling-simple.traj'), path.join(logs, 'swe', 'run-2.traj'));
    const created = await ingest('--every', '1h');
    expect(created).toEqual({ scheduleId: 'ingest-fixtures', every: '1h' });
    const client = local().env.client;
    const schedule = client.schedule.getHandle('ingest-fixtures');
    try {
      await schedule.trigger();
      const deadline = Date.now() + 90_000;
      let run: IngestStatus | undefined;
      while (run === undefined && Date.now() < deadline) {
        const recent = (await schedule.describe()).info.recentActions;
        const id = recent.at(-1)?.action.workflow.workflowId;
        if (id !== undefined) {
          const handle = client.workflow.getHandle(id);
          if ((await handle.describe()).status.name === 'COMPLETED') run = (await handle.result()) as IngestStatus;
        }
        if (run === undefined) await new Promise((r) => setTimeout(r, 500));
      }
      expect(run).toMatchObject({ state: 'completed', files: { found: 5, known: 4, new: 1 }, converted: { files: 1, trajectories: 1 }, rejected: { files: 0 } });
    } finally {
      await schedule.delete();
    }
  });
});
