import { describe, expect, it } from 'vitest';
import { ConfigError, ResetNeededError } from '../../core/errors.js';
import type { Action, TaskInfo, TimeStep } from '../../core/types.js';
import { ToolUseEnv } from './env.js';
import { expectedAnswer, formatExpected, getToolTask, listToolTasks } from './index.js';

async function play(env: ToolUseEnv, reset: { seed?: number; task?: string }, actions: Action[]): Promise<TimeStep[]> {
  const out = [await env.reset(reset)];
  for (const action of actions) out.push(await env.step(action));
  return out;
}

// A held-out "combined population of two cities" task.
const SUM_TASK = listToolTasks('heldout').find((t) => t.kind === 'sum' && t.refs[0]?.attribute === 'population')?.id ?? '';

describe('ToolUseEnv', () => {
  it('reports the public task on reset', async () => {
    const ts = await new ToolUseEnv().reset({ task: SUM_TASK });
    const task = ts.info.task as TaskInfo;
    expect(task).toMatchObject({ id: SUM_TASK, domain: 'tool-use', split: 'heldout', metadata: { kind: 'sum', answerType: 'number' } });
    expect(ts.observation).toContain(task.instruction);
    expect(ts.observation).toContain('lookup(entity, attribute)');
    expect(JSON.stringify(ts.info)).not.toContain(formatExpected(expectedAnswer(getToolTask(SUM_TASK))));
  });

  it('is deterministic across instances for the same seed and actions', async () => {
    const actions: Action[] = [
      { tool: 'search', params: { query: 'glider observatory', k: 4 } },
      { tool: 'lookup', params: { entity: 'Drummerlin', attribute: 'population' } },
      { tool: 'calculator', params: { expression: '86100 / 2' } },
      { tool: 'calculator', params: { expression: '1 +' } },
      { tool: 'submit', params: { answer: '43050' } },
    ];
    const a = await play(new ToolUseEnv(), { seed: 99 }, actions);
    const b = await play(new ToolUseEnv(), { seed: 99 }, actions);
    expect(b).toEqual(a);
    expect((a[0]?.info.task as TaskInfo).split).toBe('train');
    expect(a[1]?.observation).toMatch(/^Top 4 results for "glider observatory":\n1\. \[[a-z0-9-]+\] .+ \((city|company|product|person|region|event|topic)\) — /);
    expect(a[2]?.observation).toBe('Drummerlin (city) — population: 86100');
    expect(a[3]?.observation).toBe('Result: 43050');
  });

  it('rewards a correct answer with 1 and a wrong one with 0', async () => {
    const env = new ToolUseEnv();
    const expected = formatExpected(expectedAnswer(getToolTask(SUM_TASK)));
    const right = await play(env, { task: SUM_TASK }, [{ tool: 'submit', params: { answer: expected } }]);
    expect(right[1]).toMatchObject({ reward: 1, terminated: true, truncated: false, observation: 'Correct.', info: { success: true, score: 1, reason: 'submitted' } });
    const wrong = await play(env, { task: SUM_TASK }, [{ tool: 'submit', params: { answer: '1' } }]);
    expect(wrong[1]).toMatchObject({ reward: 0, terminated: true, info: { success: false, score: 0, expected } });
  });

  it('penalises each invalid call by 0.05, down to a floor of -0.5 per episode', async () => {
    const env = new ToolUseEnv();
    await env.reset({ task: SUM_TASK });
    const unknown = await env.step({ tool: 'wikipedia', params: { q: 'x' } });
    expect(unknown).toMatchObject({ reward: -0.05, terminated: false, info: { error: { code: 'unknown_tool' } } });
    const badParams = await env.step({ tool: 'lookup', params: { entity: 'Velmora' } });
    expect(badParams).toMatchObject({ reward: -0.05, info: { error: { code: 'invalid_params' } } });
    expect(badParams.observation).toContain("must have required property 'attribute'");
    const calc = await env.step({ tool: 'calculator', params: { expression: '1 + (2 * 3))' } });
    expect(calc).toMatchObject({ reward: -0.05, info: { error: { code: 'tool_failed' } } });
    expect(calc.observation).toBe("Error: calculator: unexpected token ')' at position 11");
    let total = unknown.reward + badParams.reward + calc.reward;
    for (let i = 0; i < 12; i++) total += (await env.step({ tool: 'search', params: { query: '' } })).reward;
    expect(total).toBeCloseTo(-0.5, 12);
    const final = await env.step({ tool: 'submit', params: { answer: formatExpected(expectedAnswer(getToolTask(SUM_TASK))) } });
    expect(final).toMatchObject({ reward: 1, info: { success: true, score: 1, invalidCallPenalty: 0.5 } });
  });

  it('treats lookup misses and empty searches as valid, informative calls', async () => {
    const env = new ToolUseEnv();
    await env.reset({ seed: 1 });
    const miss = await env.step({ tool: 'lookup', params: { entity: 'Corowick', attribute: 'population' } });
    expect(miss).toMatchObject({ reward: 0, terminated: false });
    expect(miss.info.error).toBeUndefined();
    expect(miss.observation).toContain('Did you mean: Corrowick?');
    const none = await env.step({ tool: 'search', params: { query: 'qqqzzz' } });
    expect(none).toMatchObject({ reward: 0, observation: 'No documents match "qqqzzz". Try other keywords.' });
  });

  it('validates its options and the call order', async () => {
    expect(() => new ToolUseEnv({ invalidCallPenalty: -1 })).toThrow(ConfigError);
    expect(() => new ToolUseEnv({ typo: 1 })).toThrow(/invalid options/);
    const lenient = new ToolUseEnv({ invalidCallPenalty: 0 });
    await expect(lenient.step({ tool: 'submit', params: { answer: '1' } })).rejects.toBeInstanceOf(ResetNeededError);
    await lenient.reset({ seed: 3 });
    expect((await lenient.step({ tool: 'nope', params: {} })).reward).toBe(0);
  });

  it('lists its tasks by split', () => {
    const env = new ToolUseEnv();
    expect(env.listTasks('train').length).toBeGreaterThanOrEqual(150);
    expect(env.listTasks('heldout').length).toBeGreaterThanOrEqual(60);
    expect(env.listTasks()).toHaveLength(env.listTasks('train').length + env.listTasks('heldout').length);
  });

  it('declares every tool with a strict schema and a category', () => {
    for (const tool of new ToolUseEnv().tools) {
      expect(tool.parameters).toMatchObject({ type: 'object', additionalProperties: false });
      expect((tool.parameters.required as string[]).length).toBeGreaterThan(0);
    }
    expect(new ToolUseEnv().tools.map((t) => `${t.name}:${t.category}`)).toEqual(['lookup:read', 'search:search', 'calculator:execute', 'submit:submit']);
  });
});
