import { describe, expect, it } from 'vitest';
import { refsToPrune } from './plan.js';
import { compactHistory, type IterationMetrics } from './status.js';

/** Iteration `i`'s metrics with held-out success `success` and its two models. */
function iteration(i: number, success: number): IterationMetrics {
  return {
    iteration: i,
    phase: 'main',
    algorithm: 'rl',
    success: { value: success, low: success, high: success, n: 10 },
    wallMs: 1,
    refs: { checkpoint: `ckpt-${i}`, policy: `onnx-${i}` },
  };
}

describe('retention over a long loop', () => {
  // 300 iterations: the best is iteration 5 until iteration 300 beats it.
  const before = Array.from({ length: 300 }, (_, i) => iteration(i, i === 5 ? 0.9 : 0.5));
  const full = [...compactHistory(before), iteration(300, 0.95)];
  const retention = { keep_last: 3, keep_best: true };

  it('prunes the best that the new iteration superseded when it reads the history before compaction', () => {
    expect(refsToPrune(full, retention)).toEqual(expect.arrayContaining(['ckpt-5', 'onnx-5']));
    expect(refsToPrune(full, retention)).not.toContain('ckpt-300');
  });

  it('never sees that iteration again once compaction dropped it (why the loop retains before compacting)', () => {
    const compacted = compactHistory(full);
    expect(compacted.map((h) => h.iteration)).not.toContain(5);
    expect(refsToPrune(compacted, retention)).not.toContain('ckpt-5');
  });
});
