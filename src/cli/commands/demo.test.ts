import { describe, expect, it } from 'vitest';
import type { IterationMetrics } from '../../loop/status.js';
import { bestArtifactLines, formatBestSuccess } from './demo.js';

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
