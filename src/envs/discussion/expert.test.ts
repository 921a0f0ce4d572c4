import { describe, expect, it } from 'vitest';
import { playEpisode } from '../../core/__fixtures__/play-episode.js';
import { MaxSteps } from '../../core/wrappers/max-steps.js';
import { RandomAgent } from '../../policy/random.js';
import { DISCUSSION_MAX_STEPS, DiscussionEnv } from './env.js';
import { DiscussionExpert } from './expert.js';
import { listDiscussionTasks } from './tasks.js';

const HELDOUT = listDiscussionTasks('heldout');

describe('DiscussionExpert', () => {
  it('succeeds on at least 95% of held-out tasks with the scripted members, with every kind of member, without an invalid call', async () => {
    const env = new MaxSteps(new DiscussionEnv(), DISCUSSION_MAX_STEPS);
    let successes = 0;
    const traits = new Set<string>();
    for (const [i, task] of HELDOUT.entries()) {
      const r = await playEpisode(env, new DiscussionExpert(), task.id, i);
      for (const s of r.steps) expect(s.ts.info.error, `${task.id} ${s.action.tool}`).toBeUndefined();
      if (r.last.info.success !== true) continue;
      successes += 1;
      for (const p of task.participants) traits.add(p.trait);
      expect(r.last).toMatchObject({ reward: 1, terminated: true, info: { reason: 'decided', choice: task.correct } });
      expect(r.steps.length).toBeLessThanOrEqual(11);
    }
    expect(successes / HELDOUT.length).toBeGreaterThanOrEqual(0.95);
    expect([...traits].sort()).toEqual(['open', 'opinionated', 'reticent']);
  });

  it('decides by the rule on what it heard: it asks a reticent member twice, and not an open one who spoke in the group', async () => {
    const task = HELDOUT.find((t) => t.participants.some((p) => p.trait === 'reticent') && t.participants.some((p) => p.trait === 'open')) as (typeof HELDOUT)[number];
    const r = await playEpisode(new DiscussionEnv(), new DiscussionExpert(), task.id, 2);
    const asked = (name: string): number => r.steps.filter((s) => s.action.tool === 'address' && s.action.params.participant === name).length;
    for (const p of task.participants) expect(asked(p.name), `${p.name} (${p.trait})`).toBe({ open: 0, opinionated: 1, reticent: 2 }[p.trait]);
    expect(r.last.info.success).toBe(true);
    const d = await new DiscussionExpert().act({ task: { id: 'retail-train-00001', domain: 'conversation', instruction: '' }, tools: [], observation: '', history: [], stepIndex: 0 });
    expect(d.action).toMatchObject({ tool: 'decide', params: { choice: 'none' } });
  });
});

describe('the random agent', () => {
  it('succeeds on at most 5% of held-out tasks', async () => {
    const env = new MaxSteps(new DiscussionEnv(), DISCUSSION_MAX_STEPS);
    let successes = 0;
    for (const [i, task] of HELDOUT.entries()) if ((await playEpisode(env, new RandomAgent({ seed: i }), task.id, i)).last.info.success === true) successes += 1;
    expect(successes / HELDOUT.length).toBeLessThanOrEqual(0.05);
  });
});
