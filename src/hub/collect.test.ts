import { writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../core/canonical.js';
import { CountdownEnv } from '../core/__fixtures__/countdown-env.js';
import type { Agent } from '../core/agent.js';
import { GymflowError } from '../core/errors.js';
import { register } from '../core/registry.js';
import { parseTrajectory, type Trajectory } from '../core/trajectory.js';
import type { Action, TimeStep } from '../core/types.js';
import { registerBuiltinEnvs } from '../envs/index.js';
import { collect, type CollectProgress } from './collect.js';
import { resolveAgent } from '../policy/specs.js';
import { EpisodeJournal } from './store/journal.js';
import { ArtifactStore } from './store/store.js';
import { loadTrajectories } from './store/trajectory-set.js';

/** Countdown whose `countdown-5` task blows up on its second step. */
class FlakyCountdown extends CountdownEnv {
  private task = '';
  protected override async onReset(options: { task?: string }): Promise<TimeStep> {
    this.task = options.task ?? '';
    return super.onReset(options);
  }
  protected override async onStep(action: Action): Promise<TimeStep> {
    if (this.task === 'countdown-5' && this.stepCount >= 2) throw new GymflowError('SANDBOX_DIED', 'the sandbox went away');
    return super.onStep(action);
  }
}

/** Decrements by up to 3 until the counter is 0, then submits; emits token ids for the token count. */
function countdownExpert(): Agent {
  return {
    info: { name: 'countdown-expert' },
    async act(ctx) {
      const n = Number(/counter=(-?\d+)/.exec(ctx.observation)?.[1] ?? 0);
      const action: Action = n > 0 ? { tool: 'decrement', params: { by: Math.min(3, n) } } : { tool: 'submit', params: {} };
      return { action, meta: { tokens: { prompt: [1, 2], completion: [3] } } };
    },
  };
}

beforeAll(() => {
  registerBuiltinEnvs();
  register('test/flaky-v0', () => new FlakyCountdown(), { domain: 'generic', description: 'flaky countdown', maxEpisodeSteps: 10, agents: { expert: countdownExpert } }, { replace: true });
});

describe('collect', () => {
  it('runs the schedule in parallel and returns trajectories in schedule order, deterministically', async () => {
    const a = await collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'expert', n: 12, concurrency: 4, seed: 5 });
    const b = await collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'expert', n: 12, concurrency: 1, seed: 5 });
    expect(a.trajectories.map((t) => t.id)).toEqual(b.trajectories.map((t) => t.id));
    expect(a.trajectories.map((t) => (t.metadata.collect as { index: number }).index)).toEqual([...Array(12).keys()]);
    expect(new Set(a.trajectories.map((t) => t.task.id)).size).toBe(12);
    expect(a.summary).toMatchObject({ episodes: 12, successes: 12, successRate: 1, failures: { total: 0, byKind: {} }, aborted: false });
    expect(a.summary.meanSteps).toBeGreaterThan(1);
    expect(a.summary.meanReward).toBe(1);
    const c = await collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'expert', n: 12, concurrency: 4, seed: 6 });
    expect(c.trajectories.map((t) => t.task.id)).not.toEqual(a.trajectories.map((t) => t.task.id));
  });

  it('keeps the tasks and seeds of earlier collections (pinned)', async () => {
    const r = await collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'random', n: 4, seed: 5, concurrency: 2, maxSteps: 2 });
    expect(r.trajectories.map((t) => [t.task.id, (t.metadata.collect as { seed: number }).seed])).toEqual([
      ['tool-train-00762', 1439571439],
      ['tool-train-00949', 1439571439],
      ['tool-train-00660', 1439571439],
      ['tool-train-01134', 1439571439],
    ]);
  });

  it('runs G episodes per task with the same member seeds in every group', async () => {
    const r = await collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'random', n: 3, groupSize: 4, concurrency: 3, seed: 2, maxSteps: 3 });
    expect(r.trajectories).toHaveLength(12);
    const meta = r.trajectories.map((t) => t.metadata.collect as { group: number; member: number; seed: number });
    for (let k = 0; k < 3; k++) {
      const group = r.trajectories.filter((_, i) => meta[i]?.group === k);
      expect(new Set(group.map((t) => t.task.id)).size).toBe(1);
      expect(group.map((_, g) => meta[k * 4 + g]?.seed)).toEqual(meta.slice(0, 4).map((m) => m.seed));
    }
    expect(new Set(meta.slice(0, 4).map((m) => m.seed)).size).toBe(4);
    // The step limit truncates with reason max_steps.
    const truncated = r.trajectories.filter((t) => t.outcome.truncated);
    expect(truncated.every((t) => t.outcome.reason === 'max_steps' && t.steps.length === 3)).toBe(true);
    expect(r.summary.truncated).toBe(truncated.length);
  });

  it('records an episode that throws as a failed, valid trajectory with its partial steps, and goes on', async () => {
    const progress: CollectProgress[] = [];
    const r = await collect({ resolveAgent, envId: 'test/flaky-v0', agent: 'expert', concurrency: 2, seed: 1, onProgress: (p) => progress.push(p) });
    expect(r.trajectories).toHaveLength(4);
    const failed = r.trajectories.filter((t) => t.outcome.reason === 'error');
    expect(failed).toHaveLength(1);
    const f = failed[0] as Trajectory;
    expect(parseTrajectory(f, 'failed')).toEqual(f);
    expect(f.task.id).toBe('countdown-5');
    expect(f.steps).toHaveLength(1);
    expect(f.outcome).toEqual({ success: false, score: 0, terminated: false, truncated: false, reason: 'error' });
    expect(f.metadata.error).toMatchObject({ code: 'SANDBOX_DIED', message: 'the sandbox went away' });
    expect(r.summary.failures).toEqual({ total: 1, byKind: { SANDBOX_DIED: 1 }, firstMessage: { SANDBOX_DIED: 'the sandbox went away' } });
    expect(r.summary.successes).toBe(3);
    const steps = r.trajectories.reduce((a, t) => a + t.steps.length, 0);
    expect(r.summary.tokens).toEqual({ prompt: 2 * steps, completion: steps });
    expect(progress.map((p) => p.done)).toEqual([1, 2, 3, 4]);
    expect(progress.at(-1)).toMatchObject({ total: 4, successes: 3, failures: 1 });
  });

  it('scores with rewardFn, stores the set under a name with a task-set parent, and writes JSONL', async () => {
    const store = await ArtifactStore.open({ root: await mkdtemp(path.join(tmpdir(), 'gymflow-collect-')) });
    const out = path.join(await mkdtemp(path.join(tmpdir(), 'gymflow-collect-out-')), 'rollouts.jsonl');
    let calls = 0;
    const r = await collect({ resolveAgent,
      envId: 'gymflow/text-math-v0',
      agent: 'expert',
      n: 5,
      concurrency: 2,
      store,
      name: 'math/rollouts',
      parents: ['sha256:' + 'c'.repeat(64)],
      out,
      rewardFn: async (t) => {
        calls++;
        if (calls === 3) throw new Error('judge unavailable');
        return { ...t, reward: { total: 0.9, outcome: 1, process: 0.8, efficiency: 1, layers: { rules: 0.9 } } };
      },
    });
    expect(r.summary.failures.byKind).toEqual({ reward: 1 });
    expect(r.trajectories.filter((t) => t.reward?.total === 0.9)).toHaveLength(4);
    expect(r.trajectories.filter((t) => t.metadata.rewardError !== undefined)).toHaveLength(1);
    expect(await store.resolve('math/rollouts')).toBe(r.ref);
    const entry = await store.stat(r.ref as string);
    expect(entry.kind).toBe('scored-trajectories');
    expect(entry.parents).toEqual([r.taskSetRef, 'sha256:' + 'c'.repeat(64)]);
    expect((await store.stat(r.taskSetRef as string)).kind).toBe('task-set');
    expect((await loadTrajectories(store, r.ref as string)).map((t) => t.id)).toEqual(r.trajectories.map((t) => t.id));
    const lines = (await readFile(out, 'utf8')).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as Trajectory).id)).toEqual(r.trajectories.map((t) => t.id));

    // The file and the name now hold a set: a second run replaces neither unless forced.
    const again = { envId: 'gymflow/text-math-v0', agent: 'expert', resolveAgent, n: 2, store, name: 'math/rollouts', out };
    await expect(collect(again)).rejects.toThrow(`output ${out} already exists (pass --force to replace it, or choose another path)`);
    await expect(collect({ ...again, out: `${out}.2` })).rejects.toThrow(/^'math\/rollouts' already names sha256:[0-9a-f]{12} in store .* \(pass --force to move the name/);
    expect((await readFile(out, 'utf8')).trim().split('\n')).toHaveLength(5);
    expect(await store.resolve('math/rollouts')).toBe(r.ref);
    const forced = await collect({ ...again, force: true });
    expect((await readFile(out, 'utf8')).trim().split('\n')).toHaveLength(2);
    expect(await store.resolve('math/rollouts')).toBe(forced.ref);
  });

  it('keeps a set another run wrote to the same -o while it collected, and its own beside it', async () => {
    const out = path.join(await mkdtemp(path.join(tmpdir(), 'gymflow-collect-')), 'runs.jsonl');
    let written = false;
    const run = collect({ resolveAgent,
      envId: 'gymflow/text-math-v0',
      agent: 'expert',
      n: 3,
      out,
      onProgress: () => {
        // the other run commits first
        if (!written) writeFileSync(out, 'the other run\n');
        written = true;
      },
    });
    await expect(run).rejects.toThrow(new RegExp(`^output ${out} was written by another process while this command ran; it is left as it is, and this output is in ${out}\\.`));
    expect(await readFile(out, 'utf8')).toBe('the other run\n');
    const kept = (await readdir(path.dirname(out))).filter((f) => f !== 'runs.jsonl');
    expect(kept).toHaveLength(1);
    expect((await readFile(path.join(path.dirname(out), kept[0] as string), 'utf8')).trim().split('\n')).toHaveLength(3);
  });

  it('resumes from an earlier attempt: runs only the episodes it had not finished and returns the same set', async () => {
    const journaled = new Map<number, Trajectory>();
    const full = await collect({ resolveAgent, envId: 'test/flaky-v0', agent: 'expert', n: 9, concurrency: 3, seed: 2, onEpisode: async (i, t) => void journaled.set(i, t) });
    expect([...journaled.keys()].sort((a, b) => a - b)).toEqual([...Array(9).keys()]);
    // An attempt that died after some episodes: those it journaled, the failed one among them.
    const failedIndex = full.trajectories.findIndex((t) => t.outcome.reason === 'error');
    const kept = new Map([...journaled].filter(([i]) => i % 3 === 0 || i === failedIndex));
    const seeds: number[] = [];
    const counting: typeof resolveAgent = (spec, envId, o) => {
      seeds.push(o?.seed ?? -1);
      return resolveAgent(spec, envId, o);
    };
    const appended: number[] = [];
    const resumed = await collect({ resolveAgent: counting, envId: 'test/flaky-v0', agent: 'expert', n: 9, concurrency: 3, seed: 2, resume: kept, onEpisode: async (i) => void appended.push(i) });
    expect(resumed.trajectories.map((t) => t.id)).toEqual(full.trajectories.map((t) => t.id));
    expect(appended.sort((a, b) => a - b)).toEqual([...Array(9).keys()].filter((i) => !kept.has(i)));
    expect(seeds).toHaveLength(1 + 9 - kept.size); // the agent spec's check, then one agent per episode run
    expect(resumed.summary).toMatchObject({ episodes: 9, successes: full.summary.successes, failures: full.summary.failures });
  });

  it('through a real journal in the stored form and a store: the resumed set is the uninterrupted one, byte for byte', async () => {
    const store = await ArtifactStore.open({ root: await mkdtemp(path.join(tmpdir(), 'gymflow-collect-')) });
    const options = { resolveAgent, envId: 'test/flaky-v0', agent: 'expert', n: 9, concurrency: 3, seed: 2, store } as const;
    const journal = await EpisodeJournal.open(store.root, 'shard');
    const full = await collect({ ...options, onEpisode: (i, t, stored) => journal.append(i, t, stored()) });
    await journal.close();
    // An attempt that died after some episodes: what its journal kept of them.
    const lines = (await readFile(journal.file, 'utf8')).split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(9);
    await writeFile(journal.file, `${lines.filter((_, k) => k % 2 === 0).join('\n')}\n`);
    const again = await EpisodeJournal.open(store.root, 'shard');
    const kept = [...again.finished.keys()];
    expect(kept).toHaveLength(5);
    const resumed = await collect({ ...options, resume: again.finished, onEpisode: (i, t, stored) => again.append(i, t, stored()) });
    await again.remove();
    // The same episodes; those the journal kept stored byte for byte as the first attempt stored them (the others ran
    // again, at other times).
    const manifest = async (ref: string | undefined): Promise<string[]> => (await readFile(await store.localObjectFile(ref as string), 'utf8')).split('\n').slice(1, -1);
    const [first, second] = [await manifest(full.ref), await manifest(resumed.ref)];
    expect(second.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(full.trajectories.map((t) => t.id));
    for (const i of kept) expect(second[i]).toBe(first[i]);
    expect(resumed.trajectories.map((t) => canonicalJson(t)).filter((_, i) => kept.includes(i))).toEqual(full.trajectories.map((t) => canonicalJson(t)).filter((_, i) => kept.includes(i)));
  });

  it('rejects bad options before running anything', async () => {
    await expect(collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'genius', n: 1 })).rejects.toThrow(/unknown agent 'genius'/);
    await expect(collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'expert', n: 1, concurrency: 0 })).rejects.toThrow(/concurrency/);
    await expect(collect({ resolveAgent, envId: 'gymflow/nope-v0', agent: 'expert', n: 1 })).rejects.toThrow(/not registered/);
  });

  it('stops starting episodes when aborted', async () => {
    const ac = new AbortController();
    const r = await collect({ resolveAgent,
      envId: 'gymflow/tool-use-v0',
      agent: 'expert',
      n: 50,
      concurrency: 2,
      signal: ac.signal,
      onProgress: (p) => {
        if (p.done === 5) ac.abort();
      },
    });
    expect(r.trajectories.length).toBeGreaterThanOrEqual(5);
    expect(r.trajectories.length).toBeLessThan(50);
    expect(r.summary.aborted).toBe(true);
  });
});
