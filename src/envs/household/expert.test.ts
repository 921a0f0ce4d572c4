import { describe, expect, it } from 'vitest';
import type { Agent } from '../../core/agent.js';
import { Rng } from '../../core/rng.js';
import { MaxSteps } from '../../core/wrappers/max-steps.js';
import type { Action, AgentEnv, TaskInfo, TimeStep } from '../../core/types.js';
import { isDone } from '../../core/types.js';
import { RandomAgent } from '../../policy/random.js';
import { HOUSEHOLD_MAX_STEPS, HouseholdEnv } from './env.js';
import { HouseholdExpert, planTask } from './expert.js';
import { getHouseholdTask, HOUSEHOLD_TASK_TYPES, listHouseholdTasks } from './tasks.js';

/** Plays one episode; returns whether it succeeded. */
async function episode(env: AgentEnv, agent: Agent, taskId: string, seed: number): Promise<{ success: boolean; steps: number; last: TimeStep }> {
  let ts = await env.reset({ task: taskId, seed });
  const task = ts.info.task as TaskInfo;
  await agent.reset?.(task, seed);
  const history: { action: Action; observation: string; info: Record<string, unknown> }[] = [];
  while (!isDone(ts)) {
    const { action } = await agent.act({ task, tools: env.tools, observation: ts.observation, history, stepIndex: history.length });
    ts = await env.step(action);
    history.push({ action, observation: ts.observation, info: ts.info });
  }
  return { success: ts.info.success === true, steps: history.length, last: ts };
}

// A deterministic sample: every 6-type block of the held-out split, 204 episodes.
const HELDOUT_SAMPLE = listHouseholdTasks('heldout').slice(0, 204);

describe('HouseholdExpert', () => {
  it('succeeds on at least 95% of held-out episodes, on every task type, well within the step limit', async () => {
    const env = new MaxSteps(new HouseholdEnv(), HOUSEHOLD_MAX_STEPS);
    const expert = new HouseholdExpert();
    const byType = new Map<string, number>();
    let successes = 0;
    for (const [i, task] of HELDOUT_SAMPLE.entries()) {
      const r = await episode(env, expert, task.id, i);
      if (r.success) {
        successes += 1;
        byType.set(task.goal.type, (byType.get(task.goal.type) ?? 0) + 1);
        expect(r.last).toMatchObject({ reward: 1, terminated: true, info: { reason: 'goal_reached', score: 1 } });
      }
      expect(r.steps).toBeLessThanOrEqual(20);
    }
    expect(successes / HELDOUT_SAMPLE.length).toBeGreaterThanOrEqual(0.95);
    for (const type of HOUSEHOLD_TASK_TYPES) expect(byType.get(type), type).toBeGreaterThan(0);
  });

  it('plans from the task id, and gives up with finish on a task it does not know', async () => {
    const task = getHouseholdTask('household-train-00005');
    expect(planTask(task).filter((a) => a.tool === 'put')).toHaveLength(2);
    const expert = new HouseholdExpert();
    const d = await expert.act({ task: { id: 'math-train-L1-00001', domain: 'math', instruction: '1+1' }, tools: [], observation: '', history: [], stepIndex: 0 });
    expect(d.action).toEqual({ tool: 'finish', params: {} });
  });
});

describe('random agents', () => {
  it('the generic random agent succeeds on at most 15% of held-out episodes', async () => {
    const env = new MaxSteps(new HouseholdEnv(), HOUSEHOLD_MAX_STEPS);
    let successes = 0;
    for (const [i, task] of HELDOUT_SAMPLE.entries()) if ((await episode(env, new RandomAgent({ seed: 1 }), task.id, i)).success) successes += 1;
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
