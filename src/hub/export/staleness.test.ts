import { describe, expect, it } from 'vitest';
import { makeTrajectory, type Trajectory } from '../../core/trajectory.js';
import { withPolicyVersion } from '../collect.js';
import { behaviourVersion, splitByStaleness, stalenessOf } from './staleness.js';

/** A two-step trajectory of task `id`, its steps chosen by `versions` (undefined: no version recorded). */
function episode(id: string, versions: (number | undefined)[]): Trajectory {
  const t = makeTrajectory({
    task: { id, domain: 'tools', instruction: 'x' },
    envId: 'gymflow/tool-use-v0',
    agent: { name: 'policy' },
    steps: versions.map((_, index) => ({ index, action: { tool: 'submit', params: {} }, observation: '', startedAt: '2026-12-06T00:00:00.000Z', durationMs: 1 })),
    outcome: { success: true, score: 1, terminated: true, truncated: false, reason: 'submit' },
    metadata: {},
  });
  return { ...t, steps: t.steps.map((s, i) => (versions[i] === undefined ? s : { ...s, policyVersion: versions[i] })) };
}

describe('staleness', () => {
  it('is the distance from the oldest step to the policy trained, 0 without versions', () => {
    expect(behaviourVersion(episode('a', [3, 2]))).toBe(2);
    expect(stalenessOf(episode('a', [3, 2]), 4)).toBe(2);
    expect(behaviourVersion(episode('b', [undefined, undefined]))).toBeUndefined();
    expect(stalenessOf(episode('b', [undefined, undefined]), 9)).toBe(0);
    // A version newer than the policy (a batch of the policy being trained itself) is not negative staleness.
    expect(stalenessOf(episode('c', [5]), 4)).toBe(0);
  });

  it('splits a batch at max_staleness, in order', () => {
    const batch = [episode('fresh', [3, 3]), episode('old', [1, 1]), episode('expert', [undefined]), episode('mixed', [3, 2])];
    const s = splitByStaleness(batch, { policyVersion: 3, maxStaleness: 1 });
    expect(s.fresh.map((t) => t.task.id)).toEqual(['fresh', 'expert', 'mixed']);
    expect(s.stale.map((t) => t.task.id)).toEqual(['old']);
    expect(s).toMatchObject({ maxSeen: 2, oldestStale: 1 });
    expect(splitByStaleness(batch, { policyVersion: 3, maxStaleness: 2 }).stale).toEqual([]);
  });

  it('is recorded on every step without changing the trajectory id', () => {
    const t = episode('a', [undefined, undefined]);
    const v = withPolicyVersion(t, 7);
    expect(v.steps.map((s) => s.policyVersion)).toEqual([7, 7]);
    expect(v.id).toBe(t.id);
    expect(withPolicyVersion(t, undefined)).toBe(t);
  });
});
