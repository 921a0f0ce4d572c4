import { describe, expect, it } from 'vitest';
import { EpisodeEndedError, ResetNeededError, TaskError } from '../../core/errors.js';
import type { Action, TaskInfo, TimeStep } from '../../core/types.js';
import { TextMathEnv } from './env.js';
import { evaluate } from './expression.js';
import { getMathTask } from './tasks.js';

async function play(env: TextMathEnv, reset: { seed?: number; task?: string }, actions: Action[]): Promise<TimeStep[]> {
  const out = [await env.reset(reset)];
  for (const action of actions) out.push(await env.step(action));
  return out;
}

describe('TextMathEnv', () => {
  it('reports the task on reset, without the answer', async () => {
    const env = new TextMathEnv();
    const ts = await env.reset({ task: 'math-train-L2-00017' });
    const task = ts.info.task as TaskInfo;
    expect(task).toMatchObject({ id: 'math-train-L2-00017', domain: 'math', split: 'train' });
    expect(ts.observation).toContain(task.instruction);
    expect(ts.observation).toContain('reduced fraction');
    expect(JSON.stringify(ts.info)).not.toContain(`"${evaluate(getMathTask(task.id).expr).toString()}"`);
  });

  it('is deterministic: the same seed gives the same episode in two instances', async () => {
    const actions: Action[] = [
      { tool: 'think', params: { thought: 'hmm' } },
      { tool: 'submit', params: { answer: '12' } },
    ];
    const a = await play(new TextMathEnv(), { seed: 123 }, actions);
    const b = await play(new TextMathEnv(), { seed: 123 }, actions);
    expect(b).toEqual(a);
    const c = await play(new TextMathEnv(), { seed: 124 }, actions);
    expect((c[0]?.info.task as TaskInfo).split).toBe('train');
  });

  it('samples training tasks when no task is given', async () => {
    const env = new TextMathEnv();
    const seen = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      const ts = await env.reset({ seed });
      const task = ts.info.task as TaskInfo;
      expect(task.split).toBe('train');
      seen.add(task.id);
    }
    expect(seen.size).toBeGreaterThan(20);
  });

  it('rewards 1 / 0.5 / 0 by the documented rule', async () => {
    const id = 'math-heldout-L4-00002';
    const expected = evaluate(getMathTask(id).expr);
    expect(expected.isInteger()).toBe(false);
    const env = new TextMathEnv();
    const submit = async (answer: string): Promise<TimeStep> => {
      await env.reset({ task: id });
      return env.step({ tool: 'submit', params: { answer } });
    };
    const right = await submit(expected.toString());
    expect(right).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { success: true, score: 1, reason: 'submitted' } });
    const decimal = (Number(expected.num) / Number(expected.den)).toString();
    const unreduced = `${expected.num * 2n}/${expected.den * 2n}`;
    for (const answer of [unreduced, ` +${expected.toString()}`]) {
      expect(await submit(answer)).toMatchObject({ reward: 0.5, info: { success: false, score: 0.5, verdict: 'non_canonical' } });
    }
    // A finite decimal only if the denominator allows it; either way it must not score 1.
    expect((await submit(decimal)).reward).toBeLessThan(1);
    expect(await submit('999')).toMatchObject({ reward: 0, info: { success: false, score: 0, verdict: 'wrong' } });
    expect(await submit('no idea')).toMatchObject({ reward: 0, info: { verdict: 'unparseable' } });
  });

  it('acknowledges think with reward 0 and does not end the episode', async () => {
    const env = new TextMathEnv();
    await env.reset({ seed: 1 });
    const ts = await env.step({ tool: 'think', params: { thought: '2 + 2 = 4' } });
    expect(ts).toMatchObject({ reward: 0, terminated: false, truncated: false });
    expect(ts.observation).toMatch(/Noted/);
  });

  it('turns invalid actions into observations with info.error', async () => {
    const env = new TextMathEnv();
    await env.reset({ seed: 1 });
    const unknown = await env.step({ tool: 'calculator', params: { expression: '1+1' } });
    expect(unknown.info.error).toMatchObject({ code: 'unknown_tool' });
    expect(unknown.observation).toMatch(/unknown tool 'calculator'.*think, submit/);
    const bad = await env.step({ tool: 'submit', params: { answer: 42 } });
    expect(bad).toMatchObject({ reward: 0, terminated: false, info: { error: { code: 'invalid_params' } } });
    const extra = await env.step({ tool: 'think', params: { thought: 'x', mood: 'happy' } });
    expect(extra.info.error).toMatchObject({ code: 'invalid_params' });
    expect(extra.observation).toContain("'mood'");
  });

  it('enforces the protocol: step before reset or after the end throws typed errors', async () => {
    const env = new TextMathEnv();
    await expect(env.step({ tool: 'think', params: { thought: 'x' } })).rejects.toBeInstanceOf(ResetNeededError);
    await env.reset({ seed: 1 });
    await env.step({ tool: 'submit', params: { answer: '0' } });
    await expect(env.step({ tool: 'submit', params: { answer: '0' } })).rejects.toBeInstanceOf(EpisodeEndedError);
    await expect(env.reset({ task: 'math-train-L9-00000' })).rejects.toBeInstanceOf(TaskError);
    await env.close();
    await env.close();
  });

  it('lists tasks by split', () => {
    const env = new TextMathEnv();
    expect(env.listTasks('train')).toHaveLength(200);
    expect(env.listTasks('heldout')).toHaveLength(100);
    expect(env.listTasks()).toHaveLength(300);
  });
});
