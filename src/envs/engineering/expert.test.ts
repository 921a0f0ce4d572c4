import { describe, expect, it } from 'vitest';
import { playEpisode } from '../../core/__fixtures__/play-episode.js';
import { MaxSteps } from '../../core/wrappers/max-steps.js';
import { RandomAgent } from '../../policy/random.js';
import { ENGINEERING_MAX_STEPS, EngineeringEnv } from './env.js';
import { EngineeringExpert } from './expert.js';
import { FAULT_KINDS } from './fleet.js';
import { listEngineeringTasks } from './tasks.js';

const HELDOUT = listEngineeringTasks('heldout');

describe('EngineeringExpert', () => {
  it('succeeds on at least 95% of held-out tasks with the scripted commander, on every fault kind, with no refused call', async () => {
    const env = new MaxSteps(new EngineeringEnv(), ENGINEERING_MAX_STEPS);
    const byKind = new Map<string, number>();
    let successes = 0;
    for (const [i, task] of HELDOUT.entries()) {
      const r = await playEpisode(env, new EngineeringExpert(), task.id, i);
      for (const s of r.steps) expect(s.ts.info.error, `${task.id} ${s.action.tool}`).toBeUndefined();
      if (!r.success) continue;
      successes += 1;
      byKind.set(task.kind, (byKind.get(task.kind) ?? 0) + 1);
      expect(r.last).toMatchObject({ reward: 1, terminated: true, info: { reason: 'resolved', score: 1, harmful: [] } });
      expect(r.steps.length).toBeLessThan(ENGINEERING_MAX_STEPS);
    }
    expect(successes / HELDOUT.length).toBeGreaterThanOrEqual(0.95);
    for (const kind of FAULT_KINDS) expect(byKind.get(kind), kind).toBeGreaterThan(0);
  });

  it('names in its update and its resolve only what it read: the faulty service appears in an observation before', async () => {
    const env = new EngineeringEnv();
    for (const [i, task] of HELDOUT.slice(0, 20).entries()) {
      const r = await playEpisode(env, new EngineeringExpert(), task.id, 100 + i);
      const seen = r.steps.slice(0, r.steps.findIndex((s) => s.action.tool === 'respond' && /Shall I proceed/.test(String(s.action.params.content)))).map((s) => s.ts.observation).join('\n');
      expect(seen, task.id).toContain(task.incident.fault.service);
      expect(r.success, task.id).toBe(true);
    }
  });

  it('gives up by resolving without a cause on a task it does not know', async () => {
    const d = await new EngineeringExpert().act({ task: { id: 'household-train-00001', domain: 'household', instruction: '' }, tools: [], observation: '', history: [], stepIndex: 0 });
    expect(d.action).toEqual({ tool: 'resolve', params: { root_cause: 'unknown', summary: 'I could not find the cause.' } });
  });
});

describe('the random agent', () => {
  it('succeeds on at most 5% of held-out tasks', async () => {
    const env = new MaxSteps(new EngineeringEnv(), ENGINEERING_MAX_STEPS);
    let successes = 0;
    for (const [i, task] of HELDOUT.entries()) if ((await playEpisode(env, new RandomAgent({ seed: i }), task.id, i)).success) successes += 1;
    expect(successes / HELDOUT.length).toBeLessThanOrEqual(0.05);
  });
});
