import { describe, expect, it } from 'vitest';
import type { TaskInfo } from '../core/types.js';
import { mixSeed } from '../core/rng.js';
import { episodeSeeds, EPISODE_STREAM, planEpisodes } from './seeds.js';

const tasks: TaskInfo[] = Array.from({ length: 5 }, (_, i) => ({ id: `t${i}`, domain: 'generic', instruction: '' }));

describe('seed schedule', () => {
  it('groups share the member seeds; members of a group differ; a group runs one task', () => {
    const plans = planEpisodes({ seed: 7, n: 4, groupSize: 3, tasks, shuffle: true });
    expect(plans).toHaveLength(12);
    expect(plans.map((p) => p.index)).toEqual([...Array(12).keys()]);
    for (let k = 0; k < 4; k++) {
      const group = plans.filter((p) => p.group === k);
      expect(new Set(group.map((p) => p.task?.id)).size).toBe(1);
      expect(group.map((p) => p.seed)).toEqual([0, 1, 2].map((g) => mixSeed(7, EPISODE_STREAM, g)));
    }
    expect(new Set(plans.map((p) => p.task?.id)).size).toBe(4);
  });

  it('visits every task once per epoch, reshuffles per epoch and gives revisits fresh seeds', () => {
    const plans = planEpisodes({ seed: 3, n: 10, tasks, shuffle: true });
    const epoch0 = plans.slice(0, 5).map((p) => p.task?.id);
    const epoch1 = plans.slice(5).map((p) => p.task?.id);
    expect([...epoch0].sort()).toEqual(tasks.map((t) => t.id));
    expect([...epoch1].sort()).toEqual(tasks.map((t) => t.id));
    expect(new Set(plans.slice(0, 5).map((p) => p.seed)).size).toBe(1);
    expect(plans[5]?.seed).not.toBe(plans[0]?.seed);
    // Another seed gives another order.
    const other = planEpisodes({ seed: 4, n: 5, tasks, shuffle: true }).map((p) => p.task?.id);
    expect(other).not.toEqual(epoch0);
  });

  it('is a prefix-stable function of (seed, tasks, n, G)', () => {
    const small = planEpisodes({ seed: 11, n: 3, groupSize: 2, tasks, shuffle: true });
    const big = planEpisodes({ seed: 11, n: 9, groupSize: 2, tasks, shuffle: true });
    expect(big.slice(0, 6)).toEqual(small);
  });

  it('keeps explicit tasks in order, and seeds every episode separately when tasks cannot be listed', () => {
    expect(planEpisodes({ seed: 1, n: 7, tasks, shuffle: false }).map((p) => p.task?.id)).toEqual(['t0', 't1', 't2', 't3', 't4', 't0', 't1']);
    const free = planEpisodes({ seed: 1, n: 3, tasks: undefined, shuffle: true });
    expect(free.map((p) => p.seed)).toEqual([0, 1, 2].map((i) => mixSeed(1, EPISODE_STREAM, i)));
    expect(() => planEpisodes({ seed: 1, n: 3, groupSize: 2, tasks: undefined, shuffle: true })).toThrow(/groupSize 2 needs task ids/);
    expect(() => planEpisodes({ seed: 1, tasks: undefined, shuffle: true })).toThrow(/n is required/);
  });

  it('keeps the schedules of earlier collections (pinned: stored sets and histories were made with them)', () => {
    expect(planEpisodes({ seed: 3, n: 7, tasks, shuffle: true }).map((p) => [p.task?.id, p.seed])).toEqual([
      ['t1', 70421422],
      ['t4', 70421422],
      ['t3', 70421422],
      ['t0', 70421422],
      ['t2', 70421422],
      ['t4', 1907865261],
      ['t2', 1907865261],
    ]);
    expect(planEpisodes({ seed: 9, n: 3, groupSize: 2, tasks, shuffle: true }).map((p) => [p.task?.id, p.seed])).toEqual([
      ['t4', 990587505],
      ['t4', 1548211477],
      ['t0', 990587505],
      ['t0', 1548211477],
      ['t2', 990587505],
      ['t2', 1548211477],
    ]);
  });
});

describe('episodeSeeds', () => {
  it('keeps the seeds of earlier evaluations (pinned: paired comparisons with stored results depend on them)', () => {
    expect(episodeSeeds(3, 5)).toEqual([884521706, 1289306659, 1214976533, 705069852, 734751661]);
  });

  it('depends only on (seed, i): a longer run extends a shorter one', () => {
    expect(episodeSeeds(7, 10).slice(0, 4)).toEqual(episodeSeeds(7, 4));
    expect(episodeSeeds(7, 4)).not.toEqual(episodeSeeds(8, 4));
    for (const s of episodeSeeds(1, 50)) expect(Number.isSafeInteger(s) && s >= 0 && s < 2 ** 31).toBe(true);
  });
});

describe("evaluate's seed scheme", () => {
  it('deals the tasks in order and gives episode i the i-th seed of the stream', () => {
    const two = tasks.slice(0, 2);
    const plans = planEpisodes({ seed: 3, n: 5, tasks: two, shuffle: false, seeds: 'stream' });
    expect(plans.map((p) => p.task?.id)).toEqual(['t0', 't1', 't0', 't1', 't0']);
    expect(plans.map((p) => p.seed)).toEqual([884521706, 1289306659, 1214976533, 705069852, 734751661]);
    expect(planEpisodes({ seed: 3, n: 2, tasks: undefined, shuffle: false, seeds: 'stream' }).map((p) => p.seed)).toEqual(episodeSeeds(3, 2));
  });
});
