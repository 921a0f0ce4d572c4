import { describe, expect, it } from 'vitest';
import type { IterationMetrics } from '../../pipeline/status.js';
import { formatBestSuccess } from './demo.js';

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
});
