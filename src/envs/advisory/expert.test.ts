import { describe, expect, it } from 'vitest';
import { playEpisode } from '../../core/__fixtures__/play-episode.js';
import { MaxSteps } from '../../core/wrappers/max-steps.js';
import { RandomAgent } from '../../policy/random.js';
import { ADVISORY_MAX_STEPS, AdvisoryEnv } from './env.js';
import { AdvisoryExpert } from './expert.js';
import { listAdvisoryTasks } from './tasks.js';

const HELDOUT = listAdvisoryTasks('heldout');

describe('AdvisoryExpert', () => {
  it('succeeds on at least 95% of held-out tasks with the scripted user, asking before it searches and using only ids it was shown', async () => {
    const env = new MaxSteps(new AdvisoryEnv(), ADVISORY_MAX_STEPS);
    let successes = 0;
    for (const [i, task] of HELDOUT.entries()) {
      const r = await playEpisode(env, new AdvisoryExpert(), task.id, i);
      for (const s of r.steps) expect(s.ts.info.error, `${task.id} ${s.action.tool}`).toBeUndefined();
      const tools = r.steps.map((s) => s.action.tool);
      expect(tools.slice(0, 7).every((t) => t === 'respond')).toBe(true);
      expect(tools[tools.length - 1]).toBe('recommend');
      let seen = '';
      for (const s of r.steps) {
        if (s.action.tool === 'recommend') for (const id of JSON.stringify(s.action.params).match(/\b(FL\d{4}|HT\d{3}|AC\d{3})\b/g) ?? []) expect(seen, `${task.id} ${id}`).toContain(id);
        seen += `${s.ts.observation}\n`;
      }
      if (r.success) successes += 1;
    }
    expect(successes / HELDOUT.length).toBeGreaterThanOrEqual(0.95);
  });

  it('gives up with an empty recommendation on a task it does not know', async () => {
    const d = await new AdvisoryExpert().act({ task: { id: 'household-train-00001', domain: 'household', instruction: '' }, tools: [], observation: '', history: [], stepIndex: 0 });
    expect(d.action).toEqual({ tool: 'recommend', params: { outbound_flight: 'none', return_flight: 'none', hotel: 'none', activities: [] } });
  });
});

describe('the random agent', () => {
  it('succeeds on at most 5% of held-out tasks', async () => {
    const env = new MaxSteps(new AdvisoryEnv(), ADVISORY_MAX_STEPS);
    let successes = 0;
    for (const [i, task] of HELDOUT.entries()) if ((await playEpisode(env, new RandomAgent({ seed: i }), task.id, i)).success) successes += 1;
    expect(successes / HELDOUT.length).toBeLessThanOrEqual(0.05);
  });
});
