import { describe, expect, it } from 'vitest';
import { compare } from './compare.js';
import { compareToMarkdown } from './markdown.js';
import { bootstrapMeanDifferenceCi, pairedBootstrapMeanDifferenceCi } from '../core/stats/bootstrap.js';
import { holm } from '../core/stats/corrections.js';
import { mannWhitneyU } from '../core/stats/mann-whitney.js';
import { mcnemarExact } from '../core/stats/mcnemar.js';
import { pairedTTest } from '../core/stats/paired-t.js';
import { welchTTest } from '../core/stats/welch.js';
import { expectClose } from '../core/stats/__fixtures__/expect-close.js';
import { evalResultOf } from './__fixtures__/results.js';

const strong = [0.9, 1, 0.8, 1, 0.95, 0.85, 1, 0.9, 0.75, 1, 0.9, 0.95];
const mid = [0.5, 0.6, 0.4, 0.55, 0.5, 0.45, 0.65, 0.5, 0.35, 0.6, 0.5, 0.55];
const midToo = [0.45, 0.6, 0.35, 0.6, 0.55, 0.4, 0.6, 0.45, 0.4, 0.55, 0.5, 0.5];

describe('compare', () => {
  it('runs Welch, Mann–Whitney and paired t on each pair with the stats functions', () => {
    const r = compare([evalResultOf('a', strong), evalResultOf('b', mid)], { resamples: 500 });
    const c = r.comparisons[0];
    expect(r.comparisons).toHaveLength(1);
    expect(c).toMatchObject({ a: 'a', b: 'b', significant: true });
    expect(c?.welch.p).toBe(welchTTest(strong, mid).pValue);
    expect(c?.welch.df).toBe(welchTTest(strong, mid).df);
    expect(c?.mannWhitney.p).toBe(mannWhitneyU(strong, mid).pValue);
    expect(c?.mannWhitney.method).toBe('asymptotic'); // 12 vs 12
    // Tasks are paired in sorted-id order, so the sums run in another order: equal up to rounding.
    expectClose(c?.paired?.p ?? Number.NaN, pairedTTest(strong, mid).pValue, 1e-12);
    expect(c?.paired?.tasks).toBe(12);
    // Same task set: the bootstrap resamples tasks (pairs), taken in sorted task-id order.
    const order = strong.map((_, i) => i).sort((i, j) => `t${i}`.localeCompare(`t${j}`));
    const expected = pairedBootstrapMeanDifferenceCi(order.map((i) => strong[i] as number), order.map((i) => mid[i] as number), { resamples: 500, seed: 0 });
    expect(c?.bootstrap.design).toBe('paired-tasks');
    expectClose(c?.bootstrap.low ?? Number.NaN, expected.low, 1e-12);
    expectClose(c?.bootstrap.high ?? Number.NaN, expected.high, 1e-12);
    // A single comparison: the adjusted p-values equal the raw ones.
    expect(c?.welch.pHolm).toBe(c?.welch.p);
    expect(c?.welch.pBonferroni).toBe(c?.welch.p);
  });

  it('averages repeated tasks before pairing, and bootstraps unpaired when the task sets differ', () => {
    // a ran t0 twice (0 and 1 → 0.5), t1 and t2 once; b ran t0, t1, t3.
    const a = evalResultOf('a', [0, 1, 0.2, 0.9], ['t0', 't0', 't1', 't2']);
    const b = evalResultOf('b', [0.1, 0.4, 0.3], ['t0', 't1', 't3']);
    const c = compare([a, b]).comparisons[0];
    expect(c?.paired?.tasks).toBe(2);
    expect(c?.paired?.meanDifference).toBeCloseTo((0.5 - 0.1 + (0.2 - 0.4)) / 2, 12);
    expect(c?.paired?.p).toBe(pairedTTest([0.5, 0.2], [0.1, 0.4]).pValue);
    expect(c?.bootstrap).toMatchObject({ design: 'unpaired', ...pick(bootstrapMeanDifferenceCi([0, 1, 0.2, 0.9], [0.1, 0.4, 0.3], { resamples: 2000, seed: 0 })) });
    // Fewer than two shared tasks: no paired test.
    expect(compare([evalResultOf('a', [1, 2], ['x', 'y']), evalResultOf('b', [1, 2], ['y', 'z'])]).comparisons[0]?.paired).toBeNull();
  });

  it('adjusts p-values with Holm and Bonferroni across all comparisons', () => {
    const r = compare([evalResultOf('strong', strong), evalResultOf('mid', mid), evalResultOf('mid2', midToo)]);
    expect(r.comparisons.map((c) => `${c.a}-${c.b}`)).toEqual(['strong-mid', 'strong-mid2', 'mid-mid2']);
    const raw = r.comparisons.map((c) => c.welch.p as number);
    expect(r.comparisons.map((c) => c.welch.pHolm)).toEqual(holm(raw));
    expect(r.comparisons.map((c) => c.welch.pBonferroni)).toEqual(raw.map((p) => Math.min(1, 3 * p)));
    expect(r.comparisons.map((c) => c.significant)).toEqual([true, true, false]);
  });

  it('ranks best first and marks a row that beats the next-ranked one', () => {
    const r = compare([evalResultOf('mid2', midToo), evalResultOf('strong', strong), evalResultOf('mid', mid)]);
    expect(r.leaderboard.map((row) => [row.rank, row.label, row.mark, row.beats])).toEqual([
      [1, 'strong', '*', ['mid', 'mid2']],
      [2, 'mid', '', []],
      [3, 'mid2', '', []],
    ]);
    expect(r.leaderboard[0]?.ci).toEqual(evalResultOf('strong', strong).metrics.reward.ci);
    const md = compareToMarkdown(r);
    expect(md).toContain('| 1 | strong |');
    expect(md).toContain('`*`: significantly better than the next-ranked agent');
  });

  it('ranks lower-is-better metrics ascending', () => {
    const r = compare([evalResultOf('a', strong), evalResultOf('b', mid)], { metric: 'steps' });
    expect(r.higherIsBetter).toBe(false);
    expect(r.comparisons[0]?.difference).toBe(0);
    expect(r.leaderboard.every((row) => row.mark === '')).toBe(true);
  });

  it('compares against the first result only in baseline mode', () => {
    const r = compare([evalResultOf('mid', mid), evalResultOf('strong', strong), evalResultOf('mid2', midToo)], { mode: 'baseline' });
    expect(r.comparisons.map((c) => `${c.a}-${c.b}`)).toEqual(['mid-strong', 'mid-mid2']);
    const marks = Object.fromEntries(r.leaderboard.map((row) => [row.label, row.mark]));
    expect(marks).toEqual({ strong: '*', mid: '', mid2: '' });
  });

  it('uses the chosen primary test for significance', () => {
    // 3 vs 3 fully separated: exact p = 2/C(6, 3) = 0.1 is the smallest a two-sided Mann–Whitney can give.
    const r = compare([evalResultOf('a', [1, 1.1, 1.2]), evalResultOf('b', [0, 0.1, 0.2])], { primary: 'mann-whitney' });
    expect(r.comparisons[0]?.mannWhitney).toMatchObject({ method: 'exact', u: 9 });
    expect(r.comparisons[0]?.mannWhitney.p).toBeCloseTo(0.1, 15);
    expect(r.comparisons[0]?.significant).toBe(false);
    const md = compareToMarkdown(r);
    expect(md).toContain('| 0.10 (0.10) exact |');
    expect(md).toContain('Mann–Whitney p marked exact');
    expect(compareToMarkdown(compare([evalResultOf('a', strong), evalResultOf('b', mid)]))).not.toContain('exact');
    expect(compare([evalResultOf('a', [1, 1.1, 1.2]), evalResultOf('b', [0, 0.1, 0.2])]).comparisons[0]?.significant).toBe(true);
  });

  it('runs exact McNemar on success over the episodes both ran, matched by task and seed', () => {
    // 40 episodes: 24 only "after" solves, 3 only "before", 5 both, 8 neither. p = 2 · (1 + 27 + 351 + 2925) / 2^27.
    const after = [...Array<number>(24).fill(1), ...Array<number>(3).fill(0), ...Array<number>(5).fill(1), ...Array<number>(8).fill(0)];
    const before = [...Array<number>(24).fill(0), ...Array<number>(3).fill(1), ...Array<number>(5).fill(1), ...Array<number>(8).fill(0)];
    const r = compare([evalResultOf('before', before), evalResultOf('after', after)], { metric: 'success', primary: 'mcnemar', alpha: 0.01 });
    const c = r.comparisons[0];
    expect(c?.mcnemar).toMatchObject({ pairs: 40, onlyA: 3, onlyB: 24, statistic: 3 });
    expect(c?.mcnemar?.p).toBe(mcnemarExact(before, after).pValue);
    expect(c?.mcnemar?.p).toBeLessThan(0.01);
    expect(c?.significant).toBe(true);
    expect(r.leaderboard[0]).toMatchObject({ label: 'after', mark: '*', beats: ['before'] });
    expect(compareToMarkdown(r)).toContain('| 4.9e-5 (4.9e-5) [3/24 of 40] |');
    // Not a 0/1 metric, or episodes that do not match (other seeds): no McNemar, and no significance from it.
    expect(compare([evalResultOf('a', strong), evalResultOf('b', mid)]).comparisons[0]?.mcnemar).toBeNull();
    const shifted = { ...evalResultOf('after', after), episodes: evalResultOf('after', after).episodes.map((e) => ({ ...e, seed: e.seed + 100 })) };
    const unmatched = compare([evalResultOf('before', before), shifted], { metric: 'success', primary: 'mcnemar' }).comparisons[0];
    expect(unmatched?.mcnemar).toBeNull();
    expect(unmatched?.significant).toBe(false);
  });

  it('reads the direction of a paired comparison from the per-task differences, and prints the interval with its own estimate', () => {
    // A ran t0 (solved) 100 times and t1..t11 (failed) once each; B scored 0.5 on each task once. By episodes A
    // is ahead (0.90 against 0.50); by task A is behind on 11 of 12 (mean per-task difference −0.417).
    const tasks = Array.from({ length: 12 }, (_, i) => `t${i}`);
    const a = evalResultOf('a', [...new Array<number>(100).fill(1), ...new Array<number>(11).fill(0)], [...new Array<string>(100).fill('t0'), ...tasks.slice(1)]);
    const b = evalResultOf('b', new Array<number>(12).fill(0.5), tasks);
    const r = compare([a, b], { primary: 'paired', metric: 'reward' });
    const c = r.comparisons[0]!;
    expect(c.difference).toBeGreaterThan(0);
    expect(c.paired?.meanDifference).toBeCloseTo(-5 / 12, 12);
    expect(c.bootstrap).toMatchObject({ design: 'paired-tasks', estimate: c.paired?.meanDifference });
    expect(c.significant).toBe(true);
    expect(r.leaderboard.find((row) => row.label === 'b')?.beats).toEqual(['a']);
    expect(r.leaderboard.find((row) => row.label === 'a')?.beats).toEqual([]);
    expect(compareToMarkdown(r)).toMatch(/\| a \| b \| 0\.401 \| -0\.417 \[-0\.[0-9]+, -0\.[0-9]+\] paired-tasks \|/);
  });

  it('is JSON-serialisable even with degenerate (zero-variance) samples', () => {
    const r = compare([evalResultOf('a', [1, 1, 1, 1]), evalResultOf('b', [0, 0, 0, 0])], { metric: 'success' });
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(r.comparisons[0]?.welch).toMatchObject({ statistic: null, df: null, p: 0 });
    expect(r.comparisons[0]?.significant).toBe(true);
    const same = compare([evalResultOf('a', [1, 1, 1]), evalResultOf('b', [1, 1, 1])], { metric: 'success' });
    expect(same.comparisons[0]?.welch.p).toBeNull();
    expect(same.comparisons[0]?.mannWhitney.p).toBe(1);
    expect(same.comparisons[0]?.significant).toBe(false);
  });

  it('carries each result’s pass^k into its leaderboard row, and shows them side by side when all have one', () => {
    const withPassK = (agent: string, rewards: number[], passK: { k: number; value: number; low: number; high: number }[]) => ({
      ...evalResultOf(agent, rewards),
      trials: passK.length,
      passK,
    });
    const a = withPassK('a', strong, [
      { k: 1, value: 0.9, low: 0.8, high: 1 },
      { k: 2, value: 0.8, low: 0.6, high: 0.95 },
      { k: 3, value: 0.7, low: 0.5, high: 0.9 },
    ]);
    const b = withPassK('b', mid, [
      { k: 1, value: 0.5, low: 0.3, high: 0.7 },
      { k: 2, value: 0.25, low: 0.1, high: 0.4 },
    ]);
    const r = compare([a, b]);
    expect(r.leaderboard.map((row) => row.passK)).toEqual([a.passK, b.passK]);
    const md = compareToMarkdown(r);
    expect(md).toContain('| agent | pass^1 | pass^2 | pass^3 |');
    expect(md).toContain('| a | 0.900 [0.800, 1] | 0.800 [0.600, 0.950] | 0.700 [0.500, 0.900] |');
    expect(md).toContain('| b | 0.500 [0.300, 0.700] | 0.250 [0.100, 0.400] | — |');
    // A result without trials: no row has pass^k to set beside it.
    const mixed = compare([a, evalResultOf('b', mid)]);
    expect(mixed.leaderboard.find((row) => row.label === 'b')).not.toHaveProperty('passK');
    expect(compareToMarkdown(mixed)).not.toContain('pass^');
  });

  it('labels repeated agent specs apart', () => {
    const r = compare([evalResultOf('expert', strong), evalResultOf('expert', mid)]);
    expect(r.leaderboard.map((row) => row.label)).toEqual(['expert#1', 'expert#2']);
  });

  it('names what is wrong with its input', () => {
    expect(() => compare([evalResultOf('a', strong)])).toThrow(/need at least 2 results, got 1/);
    expect(() => compare([evalResultOf('a', strong), evalResultOf('b', mid, undefined, 'test/y-v0')])).toThrow(
      /'b' evaluated test\/y-v0 but 'a' evaluated test\/x-v0/,
    );
    expect(() => compare([evalResultOf('a', strong), evalResultOf('b', mid)], { metric: 'tokens' })).toThrow(/'a' has 0 episode\(s\) with a tokens value/);
    expect(() => compare([evalResultOf('a', strong), evalResultOf('b', mid)], { labels: ['x'] })).toThrow(/1 labels for 2 results/);
  });
});

function pick(ci: { estimate: number; low: number; high: number }): { estimate: number; low: number; high: number } {
  return { estimate: ci.estimate, low: ci.low, high: ci.high };
}
