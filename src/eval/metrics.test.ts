import { describe, expect, it } from 'vitest';
import { makeTrajectory, type TrajectoryStep } from '../core/trajectory.js';
import type { ToolSpec } from '../core/types.js';
import { episodeRecord, metricValue } from './metrics.js';

const tools: ToolSpec[] = [
  { name: 'lookup', description: '', parameters: {}, category: 'read' },
  { name: 'think', description: '', parameters: {}, category: 'think' },
  { name: 'submit', description: '', parameters: {}, category: 'submit' },
];

function step(index: number, tool: string, extra: Partial<TrajectoryStep> = {}): TrajectoryStep {
  return { index, action: { tool, params: {} }, observation: '', startedAt: '2025-01-01T00:00:00.000Z', durationMs: 5, ...extra };
}

function trajectory(steps: TrajectoryStep[], metadata: Record<string, unknown> = {}) {
  return makeTrajectory({
    task: { id: 't1', domain: 'x', instruction: '' },
    envId: 'test/x-v0',
    agent: { name: 'a' },
    steps,
    outcome: { success: true, score: 0.5, terminated: true, truncated: false, reason: 'submitted' },
    metadata,
  });
}

describe('episodeRecord', () => {
  it('reads every metric off a trajectory', () => {
    const t = trajectory(
      [
        step(0, 'think', { envReward: 0 }),
        step(1, 'lookup', { envReward: 0.05, tokens: { prompt: [1, 2, 3], completion: [4] } }),
        step(2, 'nope', { envReward: -0.05, error: { code: 'unknown_tool', message: 'no' } }),
        step(3, 'lookup', { error: { code: 'invalid_params', message: 'bad' }, tokens: { completion: [5, 6] } }),
        step(4, 'submit', { envReward: 1 }),
      ],
      { costUsd: 0.0125 },
    );
    const r = episodeRecord(t, tools, 3, 42);
    expect(r).toMatchObject({
      index: 3,
      seed: 42,
      taskId: 't1',
      trajectoryId: t.id,
      success: true,
      score: 0.5,
      reward: 1,
      steps: 5,
      toolCalls: 2, // the two lookups; think, submit and the unknown tool are not tool calls
      invalidActions: 2,
      tokens: 6,
      costUsd: 0.0125,
      reason: 'submitted',
      truncated: false,
      durationMs: 25,
    });
    expect(metricValue(r, 'success')).toBe(1);
    expect(metricValue(r, 'tokens')).toBe(6);
    expect(metricValue(r, 'invalidActions')).toBe(2);
  });

  it('reports no tokens as null and a missing or non-numeric cost as 0', () => {
    const r = episodeRecord(trajectory([step(0, 'submit')], { costUsd: 'free' }), tools, 0, 1);
    expect(r.tokens).toBeNull();
    expect(r.costUsd).toBe(0);
    expect(metricValue(r, 'tokens')).toBeNull();
  });
});
