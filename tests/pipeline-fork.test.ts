/**
 * `gymflow pipeline fork` as a user runs it: the real CLI against `gymflow dev` (a real Temporal dev server, the real
 * workers, the real trainer on a tiny model). A one-iteration loop runs; it is forked from iteration 1 with another
 * reward profile, so the fork's first iteration (2) rescores iteration 1's stored rollouts instead of collecting,
 * trains the policy of iteration 1 on them, and its artifacts descend from the old run's. The old run stays as it was.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { ArtifactStore } from '../src/hub/store/store.js';
import { freePort } from '../src/runtime/dev-server.js';
import type { PipelineStatus } from '../src/loop/status.js';
import { fastLoopYaml, gymflowIn as gymflow, startDev } from './support/cli.js';
import { requires } from './support/requires.js';

const temporal = requires.temporal();
const python = requires.python(['torch', 'gymflow_trainer']);

const CONFIG = fastLoopYaml('forktest');



type Waited = { workflowId: string; status: string; pipelineStatus: PipelineStatus; forkedFrom?: { workflowId: string; iteration: number }; rescore?: boolean; experiment?: string };

temporal.describe('gymflow pipeline fork against a dev server', () => {
  let dir = '';
  let address = '';
  let dev: ChildProcess | undefined;
  let devExit: Promise<number | null> | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gymflow-fork-'));
    address = `127.0.0.1:${await freePort()}`;
    await writeFile(join(dir, 'loop.yaml'), CONFIG);
    const stack = await startDev(['--headless', '--port', address.split(':')[1] as string, '--db', 'state/temporal.db', '--store', 'store', '--grace', '20'], dir);
    dev = stack.child;
    devExit = stack.exit;
  }, 180_000);

  afterAll(async () => {
    if (dev?.exitCode === null) dev.kill('SIGTERM');
    await devExit;
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  python.it('forks a finished loop from iteration 1 with another reward: rescored rollouts, lineage to the old run, the old run untouched', async () => {
    const first = await gymflow(['pipeline', 'start', 'loop.yaml', '--id', 'fork-origin', '--address', address, '--wait', '--json'], dir, 300_000);
    expect(first.code, first.stderr).toBe(0);
    const origin = (JSON.parse(first.stdout) as Waited).pipelineStatus;
    expect(origin.history.map((h) => h.iteration)).toEqual([1]);
    const old = origin.history[0]?.refs ?? {};
    expect(old.rollouts && old.checkpoint && old.tasks).toBeTruthy();

    // Bad forks are refused before anything starts, naming what is wrong.
    const missing = await gymflow(['pipeline', 'fork', 'fork-origin', '--from-iteration', '3', '--address', address], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("--from-iteration 3: workflow 'fork-origin' has no finished iteration 3 (its history holds 1)");
    const full = await gymflow(['pipeline', 'fork', 'fork-origin', '--from-iteration', '1', '--address', address], dir);
    expect(full.stderr).toContain('the fork starts at iteration 2, past max_iterations 1');

    // Only the reward changes: the fork's iteration 2 scores iteration 1's rollouts with the generic profile.
    await writeFile(join(dir, 'generic.yaml'), CONFIG.replace('max_iterations: 1', 'max_iterations: 2\nreward: { profile: generic }'));
    const forked = await gymflow(['pipeline', 'fork', 'fork-origin', '--from-iteration', '1', '--config', 'generic.yaml', '--id', 'fork-new', '--address', address, '--wait', '--json'], dir, 300_000);
    expect(forked.code, forked.stderr).toBe(0);
    const result = JSON.parse(forked.stdout) as Waited;
    expect(result).toMatchObject({ workflowId: 'fork-new', status: 'COMPLETED', forkedFrom: { workflowId: 'fork-origin', iteration: 1 }, rescore: true, experiment: 'forktest-fork1' });
    const s = result.pipelineStatus;
    expect(s).toMatchObject({ experiment: 'forktest-fork1', forkedFrom: { workflowId: 'fork-origin', iteration: 1 }, stopReason: 'max_iterations', policy: { iteration: 2 } });
    expect(s.history.map((h) => h.iteration)).toEqual([1, 2]);
    expect(s.history[0]).toEqual(origin.history[0]);
    expect(s.stages.tasks.state).toBe('skipped');
    expect(s.stages.collect).toMatchObject({ state: 'skipped', note: expect.stringContaining('iteration 1 of fork-origin') });
    const mine = s.history[1]?.refs ?? {};
    expect(mine.tasks).toBe(old.tasks);
    expect(mine.rollouts).not.toBe(old.rollouts);

    const store = await ArtifactStore.open({ root: join(dir, 'store') });
    // The new scored set: iteration 1's rollouts scored again (no new collection), with the fork's origin recorded.
    const scored = await store.stat(mine.rollouts as string);
    expect(scored).toMatchObject({ kind: 'scored-trajectories', parents: [old.rollouts], meta: { forkedFrom: { workflowId: 'fork-origin', iteration: 1 } } });
    const [before, after] = await Promise.all([import('../src/hub/store/trajectory-set.js').then((m) => m.loadTrajectories(store, old.rollouts as string)), import('../src/hub/store/trajectory-set.js').then((m) => m.loadTrajectories(store, mine.rollouts as string))]);
    expect(after.map((t) => t.id)).toEqual(before.map((t) => t.id));
    expect(after.map((t) => t.steps.map((st) => st.reward?.rubrics))).not.toEqual(before.map((t) => t.steps.map((st) => st.reward?.rubrics)));
    // The fork's checkpoint was trained from the old run's checkpoint of iteration 1, on a dataset of the rescored set.
    const checkpoint = await store.stat(mine.checkpoint as string);
    expect(checkpoint.parents).toContain(old.checkpoint);
    expect((await store.stat(checkpoint.parents[0] as string)).parents).toContain(mine.rollouts);

    // The old run is as it was: completed, the same history, its named artifacts where they were.
    const oldNow = await gymflow(['pipeline', 'status', 'fork-origin', '--json', '--address', address], dir);
    const oldStatus = JSON.parse(oldNow.stdout) as { status: string; pipelineStatus: PipelineStatus };
    expect(oldStatus.status).toBe('COMPLETED');
    expect(oldStatus.pipelineStatus.history).toEqual(origin.history);
    expect(oldStatus.pipelineStatus.forkedFrom).toBeUndefined();
    expect(await store.resolve('forktest/iter-1/rollouts')).toBe(old.rollouts);
    expect(await store.resolve('forktest/iter-1/checkpoint')).toBe(old.checkpoint);
    expect(await store.resolve('forktest-fork1/iter-2/rollouts')).toBe(mine.rollouts);

    // `pipeline status` says where the fork came from.
    const readable = await gymflow(['pipeline', 'status', 'fork-new', '--address', address], dir);
    expect(readable.stdout).toContain('forked      from iteration 1 of fork-origin');
  }, 600_000);
});
