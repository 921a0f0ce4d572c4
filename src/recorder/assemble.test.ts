import { describe, expect, it } from 'vitest';
import { parseTrajectory } from '../core/trajectory.js';
import { isConversionProblem } from './adapter.js';
import { assembleTrajectory, finalizeSteps } from './assemble.js';
import { terminated } from './outcome.js';

describe('finalizeSteps', () => {
  it('uses epoch + index ms when no step has a time, and marks parallel groups', () => {
    const { steps, synthetic } = finalizeSteps([
      { tool: 'a', params: {}, observation: '', metadata: {}, group: 'g' },
      { tool: 'b', params: {}, observation: '', metadata: {}, group: 'g' },
      { tool: 'respond', params: { content: 'x' }, observation: '', metadata: {}, group: 'h' },
    ]);
    expect(synthetic).toBe('all');
    expect(steps.map((s) => s.startedAt)).toEqual(['1970-01-01T00:00:00.000Z', '1970-01-01T00:00:00.001Z', '1970-01-01T00:00:00.002Z']);
    expect(steps.map((s) => s.metadata?.parallelGroup)).toEqual([{ id: 'g', size: 2, position: 0 }, { id: 'g', size: 2, position: 1 }, undefined]);
  });

  it('fills gaps after real times from the previous step end', () => {
    const { steps, synthetic } = finalizeSteps([
      { tool: 'a', params: {}, observation: '', metadata: {}, startedAt: '2025-01-01T00:00:00.000Z', durationMs: 250 },
      { tool: 'b', params: {}, observation: '', metadata: {}, thought: '  ' },
    ]);
    expect(synthetic).toBe('some');
    expect(steps[1]).toMatchObject({ startedAt: '2025-01-01T00:00:00.250Z', durationMs: 0, metadata: { syntheticTimestamp: true } });
    expect(steps[1]?.thought).toBeUndefined();
  });

  it('keeps a gap after a duration past what a Date holds at the last instant a Date holds (found by the fuzz soak)', () => {
    const { steps } = finalizeSteps([
      { tool: 'a', params: {}, observation: '', metadata: {}, startedAt: '2025-01-01T00:00:00.000Z', durationMs: 1e20 },
      { tool: 'b', params: {}, observation: '', metadata: {} },
    ]);
    expect(steps.map((s) => s.startedAt)).toEqual(['2025-01-01T00:00:00.000Z', '+275760-09-13T00:00:00.000Z']);
  });
});

describe('assembleTrajectory', () => {
  it('yields a valid trajectory with source metadata', () => {
    const [item] = [
      ...assembleTrajectory(
        {
          task: { id: 't', domain: 'generic', instruction: 'hi', metadata: { dropped: undefined } },
          envId: 'external/test-v0',
          agent: { name: 'x', model: undefined },
          steps: [{ tool: 'respond', params: { content: 'hello' }, observation: '', metadata: {} }],
          outcome: terminated('responded'),
          metadata: { note: 1, gone: undefined },
        },
        { format: 'test', file: 'f.json' },
      ),
    ];
    if (!item || isConversionProblem(item)) throw new Error('expected a trajectory');
    expect(parseTrajectory(item, 'x').id).toBe(item.id);
    expect(item.agent).toEqual({ name: 'x' });
    expect(item.task.metadata).toBeUndefined();
    expect(item.metadata).toEqual({ source: { format: 'test', file: 'f.json' }, note: 1, syntheticTimestamps: true });
  });

  it('reports schema failures as problems with the JSON path', () => {
    const items = [
      ...assembleTrajectory(
        {
          task: { id: '', domain: 'generic', instruction: '' },
          envId: 'external/test-v0',
          agent: { name: 'x' },
          steps: [{ tool: '', params: {}, observation: '', metadata: {} }],
          outcome: terminated('responded'),
          metadata: {},
        },
        { format: 'test', file: 'f.jsonl', line: 3 },
      ),
    ];
    expect(items.every(isConversionProblem)).toBe(true);
    expect(items.map((p) => (isConversionProblem(p) ? [p.line, p.path] : []))).toEqual([[3, '$.task.id'], [3, '$.steps[0].action.tool']]);
  });
});
