import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../core/trajectory.js';
import { convertFixture } from './__fixtures__/fixtures.js';
import { verifiersAdapter } from './adapters/verifiers.js';
import { diffTrajectories, formatDiff } from './diff.js';

describe('diffTrajectories', () => {
  it('compares two rollouts of the same problem', async () => {
    const { trajectories } = await convertFixture(verifiersAdapter, 'openai-chat/verifiers-math-python-gpt-4.1-mini-results.jsonl');
    const [a, , , , , b] = trajectories; // lines 1 and 6: same prompt, 3 vs 4 steps
    if (!a || !b) throw new Error('missing rollouts');
    const d = diffTrajectories(a, b);
    expect(d.identical).toBe(false);
    expect(d.steps).toEqual({ a: 3, b: 4, delta: 1 });
    expect(d.tools.a).toEqual({ python: 2, respond: 1 });
    expect(d.tools.b).toEqual({ python: 3, respond: 1 });
    expect(d.tools.onlyB).toEqual({ python: 1 });
    expect(d.tools.onlyA).toEqual({});
    expect(d.header).toEqual([]);
    expect(d.outcome).toEqual([]);
    expect(d.firstDivergence?.index).toBe(0);
    expect(d.firstDivergence?.differences.map((x) => x.field)).toContain('action.params');
    expect(formatDiff(d)).toContain('steps: 3 vs 4 (+1)');
  });

  it('finds the first divergent step and outcome differences', async () => {
    const { trajectories } = await convertFixture(verifiersAdapter, 'openai-chat/verifiers-mcp-env-gpt-4.1-mini-results.jsonl');
    const [a] = trajectories;
    if (!a) throw new Error('missing rollout');
    const same = diffTrajectories(a, a);
    expect(same).toMatchObject({ identical: true, outcome: [], steps: { delta: 0 } });
    expect(same.firstDivergence).toBeUndefined();
    const steps = a.steps.map((s, i) => (i === 1 ? { ...s, action: { tool: 'respond', params: { content: 'no idea' } } } : s));
    const { id: _id, schemaVersion: _v, ...parts } = a;
    const b = makeTrajectory({ ...parts, steps, outcome: { ...a.outcome, success: false, score: 0 } });
    const d = diffTrajectories(a, b);
    expect(d.firstDivergence).toEqual({ index: 1, differences: [{ field: 'action.params', a: a.steps[1]?.action.params, b: { content: 'no idea' } }] });
    expect(d.outcome.map((x) => x.field)).toEqual(['success', 'score']);
    const shorter = makeTrajectory({ ...parts, steps: a.steps.slice(0, 1) });
    expect(diffTrajectories(a, shorter).firstDivergence).toEqual({ index: 1, differences: [{ field: 'step', a: { tool: 'respond', params: a.steps[1]?.action.params }, b: null }] });
  });
});
