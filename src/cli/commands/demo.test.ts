import { describe, expect, it } from 'vitest';
import type { IterationMetrics } from '../../loop/status.js';
import { evalResultOf } from '../../eval/__fixtures__/results.js';
import { bestArtifactLines, formatBestSuccess, formatPhaseGain, phaseGain } from './demo.js';

const iteration = (i: number, successes: number, n: number): IterationMetrics => ({
  iteration: i,
  phase: i === 0 ? 'baseline' : 'sft',
  algorithm: i === 0 ? 'baseline' : 'sft',
  success: { value: successes / n, low: 0, high: 1, n },
  wallMs: 1000,
  refs: {},
});

describe('the demo closing line', () => {
  it('gives the best held-out success to three decimals with its count, so 59/74 does not read as 0.80', () => {
    const history = [iteration(0, 0, 74), iteration(1, 59, 74)];
    expect(formatBestSuccess({ iteration: 1, success: 59 / 74 }, history)).toBe(', best held-out success 0.797 = 59/74 (iteration 1)');
  });

  it('leaves the count out when the history no longer holds that iteration, and says nothing without a best', () => {
    expect(formatBestSuccess({ iteration: 4, success: 0.5 }, [iteration(0, 0, 74)])).toBe(', best held-out success 0.500 (iteration 4)');
    expect(formatBestSuccess(undefined, [])).toBe('');
  });

  it('tells how to check the best iteration\'s policy and checkpoint out of the store, by ref', () => {
    const best = { ...iteration(1, 59, 74), refs: { policy: `sha256:${'ab'.repeat(32)}`, checkpoint: `sha256:${'cd'.repeat(32)}`, eval: `sha256:${'ef'.repeat(32)}` } };
    const history = [iteration(0, 0, 74), best, iteration(2, 50, 74)];
    expect(bestArtifactLines({ iteration: 1 }, history, '/runs/demo/store')).toEqual([
      'demo: its policy (ONNX; act with --agent local:best-policy): npx gymflow store checkout sha256:abababababab best-policy --store /runs/demo/store',
      'demo: its checkpoint (Hugging Face): npx gymflow store checkout sha256:cdcdcdcdcdcd best-checkpoint --store /runs/demo/store',
    ]);
    expect(bestArtifactLines({ iteration: 7 }, history, 'store')).toEqual([]);
    expect(bestArtifactLines(undefined, history, 'store')).toEqual([]);
  });
});

describe('the demo closing comparison of the phases', () => {
  // 40 paired episodes: the SFT iteration solves 2, the last RL iteration those 2 and 13 more.
  const sftRewards = Array.from({ length: 40 }, (_, i) => (i < 2 ? 1 : 0));
  const rlRewards = Array.from({ length: 40 }, (_, i) => (i < 15 ? 1 : 0));
  const before = { iteration: 1, label: 'sft', result: evalResultOf('local:policy-1', sftRewards) };
  const after = { iteration: 5, label: 'rl', result: evalResultOf('local:policy-5', rlRewards) };

  it('tests the later iteration against the earlier one on their paired episodes, as gymflow compare --test mcnemar does', () => {
    const g = phaseGain(before, after);
    expect(g.comparison.difference).toBeCloseTo(13 / 40, 12);
    // exact two-sided McNemar: 13 discordant episodes, all one way: 2 · 0.5^13
    expect(g.comparison.mcnemar).toMatchObject({ pairs: 40, onlyA: 13, onlyB: 0 });
    expect(g.comparison.mcnemar?.p).toBeCloseTo(2 / 8192, 12);
    expect(g.comparison.significant).toBe(true);
  });

  it('prints both success rates with their Wilson intervals, the difference with its interval, and the p-value', () => {
    const lines = formatPhaseGain("the rl phase's gain", phaseGain(before, after));
    const wilson = (r: typeof before.result): string => `[${r.metrics.success.wilson?.low.toFixed(3)}, ${r.metrics.success.wilson?.high.toFixed(3)}]`;
    expect(lines[0]).toMatch(/^demo: the rl phase's gain: \+0\.325 \(95% CI \[0\.\d{3}, 0\.\d{3}\] paired-tasks\), exact McNemar p = 0\.00024 over 40 paired episodes \(13 newly solved, 0 lost\)$/);
    expect(lines.slice(1)).toEqual([
      `  iteration 1 (sft): held-out success 2/40 = 0.050, Wilson 95% ${wilson(before.result)}`,
      `  iteration 5 (rl): held-out success 15/40 = 0.375, Wilson 95% ${wilson(after.result)}`,
    ]);
    // a gain within noise says so
    const flat = formatPhaseGain('x', phaseGain(before, { ...after, result: evalResultOf('local:p', Array.from({ length: 40 }, (_, i) => (i === 1 || i === 2 ? 1 : 0))) }));
    expect(flat[0]).toMatch(/exact McNemar p = 1\.0 over 40 paired episodes \(1 newly solved, 1 lost\) — not significant at 0\.05$/);
  });
});
