import { describe, expect, it } from 'vitest';
import { playEpisode } from '../../core/__fixtures__/play-episode.js';
import { Rng } from '../../core/rng.js';
import { MaxSteps } from '../../core/wrappers/max-steps.js';
import type { Action, TaskInfo } from '../../core/types.js';
import { isDone } from '../../core/types.js';
import { RandomAgent } from '../../policy/random.js';
import { HOUSEHOLD_MAX_STEPS, HouseholdEnv } from './env.js';
import { HouseholdExpert, parseSeen } from './expert.js';
import { HouseholdPlanner, planTask } from './planner.js';
import { getHouseholdTask, HOUSEHOLD_TASK_TYPES, listHouseholdTasks } from './tasks.js';

// A deterministic sample: every 6-type block of the held-out split, 204 episodes.
const HELDOUT_SAMPLE = listHouseholdTasks('heldout').slice(0, 204);

describe('HouseholdExpert', () => {
  it('succeeds on at least 95% of held-out episodes, on every task type, well within the step limit', async () => {
    const env = new MaxSteps(new HouseholdEnv(), HOUSEHOLD_MAX_STEPS);
    const expert = new HouseholdExpert();
    const byType = new Map<string, number>();
    let successes = 0;
    for (const [i, task] of HELDOUT_SAMPLE.entries()) {
      const r = await playEpisode(env, expert, task.id, i);
      if (r.success) {
        successes += 1;
        byType.set(task.goal.type, (byType.get(task.goal.type) ?? 0) + 1);
        expect(r.last).toMatchObject({ reward: 1, terminated: true, info: { reason: 'goal_reached', score: 1 } });
      }
      expect(r.steps.length).toBeLessThanOrEqual(40);
    }
    expect(successes / HELDOUT_SAMPLE.length).toBeGreaterThanOrEqual(0.95);
    for (const type of HOUSEHOLD_TASK_TYPES) expect(byType.get(type), type).toBeGreaterThan(0);
  });

  it('searches: it opens closed receptacles and takes only what an observation showed it', async () => {
    const env = new MaxSteps(new HouseholdEnv(), HOUSEHOLD_MAX_STEPS);
    for (const [i, task] of HELDOUT_SAMPLE.slice(0, 60).entries()) {
      let ts = await env.reset({ task: task.id });
      const expert = new HouseholdExpert();
      const info = ts.info.task as TaskInfo;
      expert.reset(info);
      const shown = new Set<string>();
      const history: { action: Action; observation: string; info: Record<string, unknown> }[] = [];
      while (!isDone(ts)) {
        const { action } = await expert.act({ task: info, tools: env.tools, observation: ts.observation, history, stepIndex: history.length });
        if (action.tool === 'take' || action.tool === 'use') expect(shown, `${task.id} step ${history.length}`).toContain(String(action.params.object));
        ts = await env.step(action);
        expect(ts.info.error, `${task.id} ${i}`).toBeUndefined();
        for (const name of parseSeen(ts.observation)) shown.add(name);
        history.push({ action, observation: ts.observation, info: ts.info });
      }
      expect(ts.info.success).toBe(true);
    }
  });

  it('reads the names an observation lists', () => {
    expect(parseSeen('You arrive at countertop 1. On the countertop 1, you see a apple 1, a mug 2, and a knife 10.')).toEqual(['apple 1', 'mug 2', 'knife 10']);
    expect(parseSeen('You open the fridge 1. The fridge 1 is open. In it, you see nothing.')).toEqual([]);
    expect(parseSeen('You arrive at cabinet 2. The cabinet 2 is closed.')).toEqual([]);
  });

  it('gives up with finish on a task it does not know', async () => {
    const expert = new HouseholdExpert();
    const d = await expert.act({ task: { id: 'math-train-L1-00001', domain: 'math', instruction: '1+1' }, tools: [], observation: '', history: [], stepIndex: 0 });
    expect(d.action).toEqual({ tool: 'finish', params: {} });
  });
});

describe('HouseholdPlanner', () => {
  it('goes straight to where objects start: every held-out task, in fewer steps than the searching expert', async () => {
    const env = new MaxSteps(new HouseholdEnv(), HOUSEHOLD_MAX_STEPS);
    let planned = 0;
    let searched = 0;
    for (const [i, task] of HELDOUT_SAMPLE.entries()) {
      const p = await playEpisode(env, new HouseholdPlanner(), task.id, i);
      expect(p.success, task.id).toBe(true);
      planned += p.steps.length;
      searched += (await playEpisode(env, new HouseholdExpert(), task.id, i)).steps.length;
    }
    expect(planned).toBeLessThan(searched);
    expect(planTask(getHouseholdTask('household-train-00005')).filter((a) => a.tool === 'put')).toHaveLength(2);
  });
});

describe('random agents', () => {
  it('the generic random agent succeeds on at most 15% of held-out episodes', async () => {
    const env = new MaxSteps(new HouseholdEnv(), HOUSEHOLD_MAX_STEPS);
    let successes = 0;
    for (const [i, task] of HELDOUT_SAMPLE.entries()) if ((await playEpisode(env, new RandomAgent({ seed: 1 }), task.id, i)).success) successes += 1;
    expect(successes / HELDOUT_SAMPLE.length).toBeLessThanOrEqual(0.15);
  });

  it('a random agent over the admissible actions (ALFWorld\'s random baseline) succeeds on at most 15%', async () => {
    const env = new MaxSteps(new HouseholdEnv({ admissibleActions: true }), HOUSEHOLD_MAX_STEPS);
    let successes = 0;
    for (const [i, task] of HELDOUT_SAMPLE.slice(0, 120).entries()) {
      const rng = new Rng(1000 + i);
      let ts = await env.reset({ task: task.id });
      while (!isDone(ts)) {
        const admissible = (ts.info.admissible as Action[]).filter((a) => a.tool !== 'finish');
        ts = await env.step(rng.pick(admissible));
        expect(ts.info.error).toBeUndefined();
      }
      if (ts.info.success === true) successes += 1;
      else expect(ts).toMatchObject({ truncated: true, info: { reason: 'max_steps' } });
    }
    expect(successes / 120).toBeLessThanOrEqual(0.15);
  });
});
