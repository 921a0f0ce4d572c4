import { describe, expect, it } from 'vitest';
import { CountdownEnv } from '../core/__fixtures__/countdown-env.js';
import type { AgentEnv } from '../core/types.js';
import { runSchedule, type ScheduleProgress } from './scheduler.js';
import { planEpisodes } from './seeds.js';

const tasks = Array.from({ length: 4 }, (_, i) => ({ id: `t${i}`, domain: 'generic', instruction: '' }));

/** Environments that count how often they were made and closed. */
function envs(): { make: () => AgentEnv; made: AgentEnv[]; closed: Set<AgentEnv> } {
  const made: AgentEnv[] = [];
  const closed = new Set<AgentEnv>();
  return {
    made,
    closed,
    make: () => {
      const env = new CountdownEnv();
      const close = env.close.bind(env);
      env.close = async () => {
        closed.add(env);
        await close();
      };
      made.push(env);
      return env;
    },
  };
}

/** Resolves after `ms` milliseconds, so episodes finish out of order. */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('runSchedule', () => {
  it('places results by plan position at any concurrency, one environment per worker, closed at the end', async () => {
    const plans = planEpisodes({ seed: 2, n: 10, tasks, shuffle: true });
    for (const concurrency of [1, 3, 20]) {
      const e = envs();
      const progress: ScheduleProgress[] = [];
      const results = await runSchedule({
        plans,
        concurrency,
        makeEnv: e.make,
        episode: async (_env, plan) => {
          await sleep((plan.index * 7) % 5);
          return `${plan.task?.id}/${plan.seed}`;
        },
        onProgress: (p) => progress.push(p),
      });
      expect(results).toEqual(plans.map((p) => `${p.task?.id}/${p.seed}`));
      expect(e.made).toHaveLength(Math.min(concurrency, plans.length));
      expect(e.closed.size).toBe(e.made.length);
      expect(progress.map((p) => p.done)).toEqual([...Array(10).keys()].map((i) => i + 1));
      expect(progress.every((p) => p.total === 10 && p.etaMs >= 0)).toBe(true);
    }
  });

  it('replaces the environment after a result that asks for it', async () => {
    const e = envs();
    const used: AgentEnv[] = [];
    await runSchedule({
      plans: planEpisodes({ seed: 1, n: 3, tasks, shuffle: false }),
      concurrency: 1,
      makeEnv: e.make,
      episode: async (env, plan) => {
        used.push(env);
        return plan.index === 0;
      },
      discardEnv: (broken) => broken,
    });
    expect(e.made).toHaveLength(2);
    expect(used[1]).not.toBe(used[0]);
    expect(used[2]).toBe(used[1]);
    expect(e.closed.size).toBe(2);
  });

  it('stops starting episodes after one throws, lets those in flight finish and rethrows the first error', async () => {
    const e = envs();
    const started: number[] = [];
    const finished: number[] = [];
    const run = runSchedule({
      plans: planEpisodes({ seed: 1, n: 8, tasks, shuffle: false }),
      concurrency: 2,
      makeEnv: e.make,
      episode: async (_env, plan) => {
        started.push(plan.index);
        if (plan.index === 2) throw new Error('episode 2 failed');
        await sleep(plan.index === 1 ? 20 : 1);
        finished.push(plan.index);
        return plan.index;
      },
    });
    await expect(run).rejects.toThrow('episode 2 failed');
    expect(started).not.toContain(7);
    expect(finished).toContain(1);
    expect(e.closed.size).toBe(e.made.length);
  });

  it('starts no episode once the signal is aborted', async () => {
    const ac = new AbortController();
    const results = await runSchedule({
      plans: planEpisodes({ seed: 1, n: 6, tasks, shuffle: false }),
      concurrency: 1,
      makeEnv: envs().make,
      signal: ac.signal,
      episode: async (_env, plan) => {
        if (plan.index === 2) ac.abort();
        return plan.index;
      },
    });
    expect(results).toEqual([0, 1, 2, undefined, undefined, undefined]);
  });
});

describe('runSchedule with results of an earlier run', () => {
  it('runs only the positions not completed, places the completed results as they are and counts them as done', async () => {
    const plans = planEpisodes({ seed: 3, n: 8, tasks, shuffle: false });
    const completed = new Map([
      [0, 'earlier-0'],
      [5, 'earlier-5'],
      [7, 'earlier-7'],
    ]);
    const ran: number[] = [];
    const progress: ScheduleProgress[] = [];
    const e = envs();
    const results = await runSchedule({
      plans,
      concurrency: 2,
      makeEnv: e.make,
      completed,
      episode: async (_env, plan) => {
        ran.push(plan.index);
        return `ran-${plan.index}`;
      },
      onProgress: (p) => progress.push(p),
    });
    expect(ran.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 6]);
    expect(results).toEqual(['earlier-0', 'ran-1', 'ran-2', 'ran-3', 'ran-4', 'earlier-5', 'ran-6', 'earlier-7']);
    expect(progress.map((p) => p.done)).toEqual([4, 5, 6, 7, 8]);
    expect(progress.every((p) => p.total === 8)).toBe(true);
  });

  it('with every position completed runs nothing and makes no environment', async () => {
    const plans = planEpisodes({ seed: 3, n: 3, tasks, shuffle: false });
    const e = envs();
    const results = await runSchedule({
      plans,
      concurrency: 4,
      makeEnv: e.make,
      completed: new Map(plans.map((p) => [p.index, p.index * 10])),
      episode: () => Promise.reject(new Error('must not run')),
    });
    expect(results).toEqual([0, 10, 20]);
    expect(e.made).toHaveLength(0);
  });
});
