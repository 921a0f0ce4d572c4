import { describe, expect, it } from 'vitest';
import { activitySummary, ingestSummary, pipelineSummary, plural } from './summaries.js';

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
});
