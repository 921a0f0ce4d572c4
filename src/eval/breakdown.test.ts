import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import type { TaskInfo } from '../core/types.js';
import { assertMetadataField, NO_VALUE, successBy } from './breakdown.js';
import type { EpisodeRecord } from './metrics.js';
import { wilsonInterval } from '../core/stats/wilson.js';

const task = (id: string, metadata?: Record<string, unknown>): TaskInfo => ({ id, domain: 'd', instruction: id, ...(metadata ? { metadata } : {}) }) as TaskInfo;

const episode = (index: number, taskId: string, success: boolean): EpisodeRecord => ({
  index,
  taskId,
  seed: index,
  trajectoryId: `sha256:${index}`,
  success,
  score: success ? 1 : 0,
  reward: success ? 1 : 0,
  steps: 1,
  toolCalls: 0,
  invalidActions: 0,
  tokens: null,
  costUsd: 0,
  reason: 'submitted',
  truncated: false,
  durationMs: 0,
});

const TASKS = [task('a', { kind: 'sum', seen: true }), task('b', { kind: 'lookup', seen: false }), task('c', { kind: 'sum' }), task('d')];

describe('successBy', () => {
  it('counts every episode under its task value, sorted, with Wilson intervals', () => {
    const episodes = [episode(0, 'a', true), episode(1, 'b', false), episode(2, 'c', false), episode(3, 'a', true), episode(4, 'b', true)];
    expect(successBy(episodes, TASKS, 'kind')).toEqual([
      { value: 'lookup', n: 2, successes: 1, success: wilsonInterval(1, 2) },
      { value: 'sum', n: 3, successes: 2, success: wilsonInterval(2, 3) },
    ]);
  });

  it('writes non-string values as JSON and tasks without the field as (none)', () => {
    const episodes = [episode(0, 'a', true), episode(1, 'b', false), episode(2, 'c', true), episode(3, 'd', false)];
    const rows = successBy(episodes, TASKS, 'seen', 0.9);
    expect(rows.map((r) => [r.value, r.successes, r.n])).toEqual([
      [NO_VALUE, 1, 2],
      ['false', 0, 1],
      ['true', 1, 1],
    ]);
    expect(rows[0]?.success).toEqual(wilsonInterval(1, 2, 0.9));
  });

  it('names the episode and task an unknown task id comes from, and a field no task has', () => {
    expect(() => successBy([episode(7, 'zz', true)], TASKS, 'kind')).toThrow(new ConfigError("breakdown: episode 7 ran task 'zz', which the task list does not have"));
    expect(() => successBy([episode(0, 'a', true)], TASKS, 'level')).toThrow(/no task has the metadata field 'level' \(fields: kind, seen\)/);
    expect(() => successBy([episode(0, 'a', true)], TASKS, ' ')).toThrow(/field name is empty/);
    expect(() => assertMetadataField(TASKS, 'seen')).not.toThrow();
    expect(() => assertMetadataField([task('d')], 'seen')).toThrow(/\(fields: none\)/);
  });
});
