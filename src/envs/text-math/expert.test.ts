import { beforeAll, describe, expect, it } from 'vitest';
import { make } from '../../core/registry.js';
import { runEpisode } from '../../core/rollout.js';
import { registerBuiltinEnvs } from '../register.js';
import { TEXT_MATH_ENV_ID } from './env.js';
import { solveWithWorking, TextMathExpert } from './expert.js';
import { num, op } from './expression.js';

beforeAll(() => registerBuiltinEnvs());

describe('TextMathExpert', () => {
  it('writes its working operation by operation', () => {
    const { value, steps } = solveWithWorking(op('-', num(20), op('+', op('×', num(3), num(4)), num(2))));
    expect(value.toString()).toBe('6');
    expect(steps).toEqual(['3 × 4 = 12', '12 + 2 = 14', '20 - 14 = 6']);
  });

  it('refuses a task it does not know instead of guessing', async () => {
    const expert = new TextMathExpert();
    const task = { id: 'tool-train-00001', domain: 'math', instruction: 'Not a math task.' };
    await expect(expert.act({ task, tools: [], observation: '', history: [], stepIndex: 0 })).rejects.toThrow(/'tool-train-00001' is not a gymflow\/text-math-v0 task id/);
  });

  it('solves at least 95% of the held-out split through think + submit', async () => {
    const env = make(TEXT_MATH_ENV_ID);
    const tasks = env.listTasks?.('heldout') ?? [];
    expect(tasks).toHaveLength(100);
    let solved = 0;
    for (const task of tasks) {
      const trajectory = await runEpisode(env, new TextMathExpert(), { envId: TEXT_MATH_ENV_ID, task: task.id, seed: 0 });
      expect(trajectory.steps.map((s) => s.action.tool)).toEqual(['think', 'submit']);
      if (trajectory.outcome.success) solved += 1;
    }
    expect(solved / tasks.length).toBeGreaterThanOrEqual(0.95);
    await env.close();
  });
});
