import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from './config.js';
import { forkRun, type ForkSource } from './fork.js';
import type { IterationMetrics } from './status.js';

const base = {
  name: 'exp',
  env: 'gymflow/tool-use-v0',
  policy: { init: { path: '/models/base' } },
  collect: { agent: 'expert', tasks: 4 },
  train: { command: 'sft' },
  eval: { agent: 'expert', baseline: false },
  max_iterations: 3,
};
const config = (over: Record<string, unknown> = {}) => parsePipelineConfig({ ...base, ...over }, 'test');
const ref = (c: string): string => `sha256:${c.repeat(64)}`;
const entry = (iteration: number, refs: IterationMetrics['refs']): IterationMetrics => ({ iteration, phase: 'main', algorithm: 'sft', wallMs: 1, refs });
const source = (over: Partial<ForkSource> = {}): ForkSource => ({
  workflowId: 'old',
  type: 'trainingLoop',
  config: config(),
  history: [entry(1, { tasks: ref('a'), rollouts: ref('b'), scored: ref('b'), checkpoint: ref('c') }), entry(2, { rollouts: ref('d'), checkpoint: ref('e') })],
  ...over,
});
const now = new Date('2026-12-05T00:00:00Z');

describe('forkRun', () => {
  it('starts after iteration K from its checkpoint, with the history up to K, under a name of its own', () => {
    const f = forkRun(source(), { iteration: 1, now });
    expect(f.config.name).toBe('exp-fork1');
    expect(f.rescore).toBe(false); // the reward is unchanged: collect afresh
    expect(f.state).toEqual({
      iteration: 2,
      policy: { checkpointRef: ref('c'), iteration: 1 },
      history: [source().history[0]],
      paused: false,
      runs: 0,
      loopStartedAt: now.toISOString(),
      setupDone: false,
      forkedFrom: { workflowId: 'old', iteration: 1 },
    });
  });

  it('rescores iteration K rollouts when only the reward changed, and as the flags say', () => {
    const generic = config({ reward: { profile: 'generic' } });
    const f = forkRun(source(), { iteration: 1, config: generic, now });
    expect(f.rescore).toBe(true);
    expect(f.state.reuseRollouts).toEqual({ ref: ref('b'), tasks: ref('a') });
    expect(f.summary).toMatch(/rescores iteration 1's rollouts/);
    expect(forkRun(source(), { iteration: 1, config: generic, rescore: false, now }).state.reuseRollouts).toBeUndefined();
    // Another collection: collect afresh, unless forced.
    const other = config({ reward: { profile: 'generic' }, collect: { agent: 'expert', tasks: 8 } });
    expect(forkRun(source(), { iteration: 1, config: other, now }).rescore).toBe(false);
    expect(forkRun(source(), { iteration: 1, config: other, rescore: true, now }).state.reuseRollouts?.ref).toBe(ref('b'));
    expect(() => forkRun(source(), { iteration: 1, config: config({ env: 'gymflow/household-v0' }), rescore: true, now })).toThrow(/--rescore: the fork collects from gymflow\/household-v0/);
  });

  it('refuses what cannot fork, naming it', () => {
    expect(() => forkRun(source({ type: 'pipeline' }), { iteration: 1, now })).toThrow(/only a trainingLoop forks/);
    expect(() => forkRun(source(), { iteration: 5, now })).toThrow("--from-iteration 5: workflow 'old' has no finished iteration 5 (its history holds 1, 2)");
    expect(() => forkRun(source(), { iteration: 2, now, config: config({ max_iterations: 2 }) })).toThrow(/starts at iteration 3, past max_iterations 2/);
    expect(forkRun(source(), { iteration: 2, now, maxIterations: 4 }).config.max_iterations).toBe(4);
    expect(() => forkRun(source(), { iteration: 1, now, config: config({ store: '/elsewhere' }), configFile: 'new.yaml' })).toThrow(/new\.yaml \$\.store: "\/elsewhere" differs/);
    expect(() => forkRun(source({ history: [entry(1, { rollouts: ref('b') })] }), { iteration: 1, now })).toThrow(/stored no checkpoint/);
    // A loop that collects with the policy needs iteration K's ONNX export.
    expect(() => forkRun(source(), { iteration: 1, now, config: config({ collect: { agent: 'policy', tasks: 4 } }) })).toThrow(/ONNX export/);
  });
});
