import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from './config.js';
import { benchmarkEval, benchmarkUsesPolicy, evaluatesPolicy, needsOnnxPolicy, refsToPrune } from './plan.js';
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

describe('eval.benchmarks', () => {
  const base = { name: 'x', env: 'gymflow/tool-use-v0', policy: { init: { tiny: {} } }, collect: { agent: 'expert' }, train: { command: 'sft' }, max_iterations: 1, env_kwargs: { invalidCallPenalty: 0.1 } };
  const hle = { name: 'hle', env: 'gymflow/qa-v0', env_kwargs: { questions: 'q.jsonl' }, tasks: 5 };

  it("evaluates a benchmark with the eval section's settings and its own environment, split, tasks, trials and kwargs", () => {
    const c = parsePipelineConfig({ ...base, eval: { agent: 'expert', tasks: 2, temperature: 0.3, concurrency: 2, seed: 7, max_steps: 9, repeats: 3, benchmarks: [hle] } }, 't');
    expect(benchmarkEval(c, c.eval.benchmarks![0]!)).toEqual({
      envId: 'gymflow/qa-v0',
      eval: { split: 'heldout', repeats: 1, temperature: 0.3, baseline: true, concurrency: 2, seed: 7, agent: 'expert', max_steps: 9, tasks: 5, env_kwargs: { questions: 'q.jsonl' } },
    });
    const own = parsePipelineConfig({ ...base, eval: { calibration_bins: 20, benchmarks: [{ ...hle, agent: 'random', max_steps: 2, calibration_bins: 10, split: 'train', tasks: undefined }] } }, 't');
    expect(benchmarkEval(own, own.eval.benchmarks![0]!).eval).toMatchObject({ agent: 'random', max_steps: 2, calibration_bins: 10, split: 'train' });
    expect(benchmarkEval(own, own.eval.benchmarks![0]!).eval).not.toHaveProperty('tasks');
  });

  it('acts with the policy when a benchmark does, even if the main evaluation uses a reference agent', () => {
    const expertOnly = parsePipelineConfig({ ...base, eval: { agent: 'expert', benchmarks: [hle] } }, 't');
    expect([evaluatesPolicy(expertOnly), needsOnnxPolicy(expertOnly), benchmarkUsesPolicy(expertOnly, expertOnly.eval.benchmarks![0]!)]).toEqual([false, false, false]);
    const policyBench = parsePipelineConfig({ ...base, eval: { agent: 'expert', benchmarks: [{ ...hle, agent: 'policy' }] } }, 't');
    expect([evaluatesPolicy(policyBench), needsOnnxPolicy(policyBench)]).toEqual([true, true]);
    const inherits = parsePipelineConfig({ ...base, eval: { benchmarks: [hle] } }, 't');
    expect(benchmarkUsesPolicy(inherits, inherits.eval.benchmarks![0]!)).toBe(true);
  });
});
