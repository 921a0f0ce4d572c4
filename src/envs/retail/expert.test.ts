import { describe, expect, it } from 'vitest';
import { playEpisode } from '../../core/__fixtures__/play-episode.js';
import { MaxSteps } from '../../core/wrappers/max-steps.js';
import { RandomAgent } from '../../policy/random.js';
import { CONVERSATION_MAX_STEPS, RetailEnv } from './env.js';
import { RetailExpert } from './expert.js';
import { listRetailTasks, RETAIL_TASK_KINDS } from './tasks.js';

const HELDOUT = listRetailTasks('heldout');

describe('RetailExpert', () => {
  it('succeeds on at least 95% of held-out tasks with the scripted user, on every kind, never breaking the policy', async () => {
    const env = new MaxSteps(new RetailEnv(), CONVERSATION_MAX_STEPS);
    const byKind = new Map<string, number>();
    let successes = 0;
    for (const [i, task] of HELDOUT.entries()) {
      const r = await playEpisode(env, new RetailExpert(), task.id, i);
      expect(r.last.info.violations, task.id).toEqual([]);
      for (const s of r.steps) expect(s.ts.info.error, `${task.id} ${s.action.tool}`).toBeUndefined();
      if (!r.success) continue;
      successes += 1;
      byKind.set(task.kind, (byKind.get(task.kind) ?? 0) + 1);
      expect(r.last).toMatchObject({ reward: 1, terminated: true, info: { reason: task.kind === 'transfer' ? 'transferred' : 'user_stop', score: 1 } });
      expect(r.steps.length).toBeLessThan(CONVERSATION_MAX_STEPS);
    }
    expect(successes / HELDOUT.length).toBeGreaterThanOrEqual(0.95);
    for (const kind of RETAIL_TASK_KINDS) expect(byKind.get(kind), kind).toBeGreaterThan(0);
  });

  it('uses only what the conversation and the tools showed: every id it sends was said or read before', async () => {
    const env = new RetailEnv();
    for (const [i, task] of HELDOUT.slice(0, 45).entries()) {
      const r = await playEpisode(env, new RetailExpert(), task.id, 100 + i);
      let seen = `${task.instruction}\n`;
      for (const [k, s] of r.steps.entries()) {
        const ids = JSON.stringify(s.action.params).match(/#W\d{7}|\b(credit_card|paypal|gift_card)_\d{7}\b|\b\d{10}\b|@example\.com/g) ?? [];
        if (s.action.tool !== 'respond' && s.action.tool !== 'transfer_to_human_agents') for (const id of ids) expect(seen, `${task.id} step ${k} ${id}`).toContain(id);
        seen += `${s.ts.observation}\n`;
      }
      expect(r.success, task.id).toBe(true);
    }
  });

  it('follows a customer who changes their mind, and gives up by transferring on a task it does not know', async () => {
    const task = HELDOUT.find((t) => t.goals[0]?.initially !== undefined);
    expect(task).toBeDefined();
    const r = await playEpisode(new RetailEnv(), new RetailExpert(), task?.id as string, 3);
    expect(r.success).toBe(true);
    expect(r.steps.some((s) => /changed my mind|actually, no/i.test(s.ts.observation))).toBe(true);
    const writes = r.steps.filter((s) => /^(cancel|modify|return|exchange)_/.test(s.action.tool));
    expect(writes.map((s) => s.action)).toEqual(task?.gold);
    const d = await new RetailExpert().act({ task: { id: 'household-train-00001', domain: 'household', instruction: '' }, tools: [], observation: '', history: [], stepIndex: 0 });
    expect(d.action.tool).toBe('transfer_to_human_agents');
  });
});

describe('the random agent', () => {
  it('succeeds on at most 5% of held-out tasks', async () => {
    const env = new MaxSteps(new RetailEnv(), CONVERSATION_MAX_STEPS);
    let successes = 0;
    for (const [i, task] of HELDOUT.entries()) if ((await playEpisode(env, new RandomAgent({ seed: i }), task.id, i)).success) successes += 1;
    expect(successes / HELDOUT.length).toBeLessThanOrEqual(0.05);
  });
});
