import { describe, expect, it } from 'vitest';
import { freshStages, type PipelineStatus } from './status.js';
import { activitySummary, currentDetails, ingestSummary, pipelineSummary, plural } from './summaries.js';

/** A training loop's status at iteration 2 of 3, training, in its third run. */
function trainingStatus(): PipelineStatus {
  const stages = freshStages();
  stages.train = { state: 'running', progress: { done: 12, total: 40, unit: 'steps' } };
  const success = (value: number) => ({ value, low: value - 0.2, high: value + 0.2, n: 16 });
  return {
    workflow: 'trainingLoop',
    experiment: 'demo',
    env: 'gymflow/tool-use-v0',
    state: 'running',
    stage: 'train',
    iteration: 2,
    maxIterations: 3,
    paused: false,
    stages,
    artifacts: {},
    policy: { iteration: 1 },
    history: [
      { iteration: 0, phase: 'baseline', algorithm: 'baseline', success: success(0.25), wallMs: 1, refs: {} },
      { iteration: 1, phase: 'sft', algorithm: 'sft', success: success(0.625), wallMs: 1, refs: {} },
    ],
    best: { iteration: 1, success: 0.625 },
    run: 3,
    runStartedAt: '2026-12-06T00:00:00.000Z',
    loopStartedAt: '2026-12-06T00:00:00.000Z',
  };
}

describe('summaries', () => {
  it('says what a pipeline run is: workflow, experiment, env, length, fork origin', () => {
    const config = { name: 'demo', env: 'gymflow/tool-use-v0', max_iterations: 3 };
    expect(pipelineSummary('trainingLoop', config)).toBe('trainingLoop demo · gymflow/tool-use-v0 · 3 iterations');
    expect(pipelineSummary('trainingLoop', { ...config, max_iterations: 1 })).toBe('trainingLoop demo · gymflow/tool-use-v0 · 1 iteration');
    expect(pipelineSummary('pipeline', config)).toBe('pipeline demo · gymflow/tool-use-v0 · one pass');
    expect(pipelineSummary('trainingLoop', config, { workflowId: 'demo-1', iteration: 2 })).toBe(
      'trainingLoop demo · gymflow/tool-use-v0 · 3 iterations · fork of demo-1 at iteration 2',
    );
  });

  it('says where an activity runs, on one line', () => {
    expect(activitySummary({ iteration: 2, what: 'collect shard 3/8', env: 'gymflow/tool-use-v0' })).toBe('iter 2 · collect shard 3/8 · gymflow/tool-use-v0');
    expect(activitySummary({ iteration: 0, what: 'eval\n  benchmark  x', env: 'e' })).toBe('iter 0 · eval benchmark x · e');
    expect(ingestSummary({ name: 'logs', dir: '/data/logs', export: 'dpo' })).toBe('ingest logs · /data/logs → dpo');
    expect(plural(0, 'shard')).toBe('0 shards');
  });

  it('gives a run\'s current details: where it is, what it does, the last and best evaluation', () => {
    const s = trainingStatus();
    expect(currentDetails(s)).toBe('**iteration 2 of 3** · train (12/40 steps) · run 3\n\n- last evaluated: iteration 1, success 0.625 [0.425, 0.825]');
    s.history.push({ iteration: 2, phase: 'sft', algorithm: 'sft', success: { value: 0.5, low: 0.3, high: 0.7, n: 16 }, wallMs: 1, refs: {} });
    expect(currentDetails(s)).toContain('\n- best: iteration 1, success 0.625');
    const { best: _best, ...unevaluated } = s;
    expect(currentDetails({ ...unevaluated, iteration: 0, stage: 'baseline', history: [] })).toBe('**baseline evaluation** · baseline · run 3');
    expect(currentDetails({ ...s, state: 'paused', paused: true })).toMatch(/^\*\*iteration 2 of 3\*\* · paused once train \(12\/40 steps\) ends · run 3/);
    const trained = { ...s.stages, train: { state: 'done' as const } };
    expect(currentDetails({ ...s, state: 'paused', paused: true, stages: trained })).toMatch(/ · paused before the next stage · /);
    expect(currentDetails({ ...s, state: 'completed', stage: 'done', stopReason: 'max_iterations' })).toMatch(/· completed: max iterations · /);
    const long = `trainer exited 1:\n${'x'.repeat(400)}`;
    const failed = currentDetails({ ...s, state: 'failed', lastError: { stage: 'train', message: long, at: '' } });
    expect(failed).toMatch(/· failed in train: trainer exited 1: x{182}… · run 3/);
    expect(currentDetails({ ...s, state: 'cancelling', cancel: { mode: 'abort', requestedAt: '' } })).toContain('· cancelling (abort), at train (12/40 steps) ·');
    expect(currentDetails({ ...s, workflow: 'pipeline', iteration: 1 })).toMatch(/^\*\*one pass \(iteration 1\)\*\*/);
  });

  it('names the overlapped collection of asynchronous RL beside the training', () => {
    const s = trainingStatus();
    const stages = { tasks: { state: 'done' as const }, collect: { state: 'running' as const, progress: { done: 3, total: 8, unit: 'episodes' } } };
    s.next = { iteration: 3, policyVersion: 1, stages };
    expect(currentDetails(s)).toContain("\n- beside it, iteration 3's collection by policy version 1: collect (3/8 episodes)");
    s.next = { iteration: 3, policyVersion: 1, stages, error: 'collect: no worker' };
    expect(currentDetails(s)).toContain("collection by policy version 1: failed: collect: no worker");
  });
});
