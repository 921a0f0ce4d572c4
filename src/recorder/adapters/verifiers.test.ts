import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collect, convertFixture, fixture, step, tools } from '../__fixtures__/fixtures.js';
import { verifiersAdapter } from './verifiers.js';

describe('verifiers adapter', () => {
  it('math-python: one trajectory per rollout, rewards as outcome, task id from the prompt', async () => {
    const c = await convertFixture(verifiersAdapter, 'openai-chat/verifiers-math-python-gpt-4.1-mini-results.jsonl');
    expect(c.problems).toEqual([]);
    expect(c.trajectories).toHaveLength(15);
    // python calls per rollout + the final answer (counted from the file with python).
    expect(c.trajectories.map((t) => t.steps.length)).toEqual([3, 2, 3, 2, 3, 4, 2, 3, 2, 5, 4, 3, 3, 2, 3]);
    expect(c.trajectories.every((t) => t.outcome.success && t.outcome.score === 1 && t.outcome.reason === 'responded')).toBe(true);
    const [first] = c.trajectories;
    if (!first) throw new Error('no trajectory');
    expect(first.envId).toBe('external/verifiers-v0');
    expect(first.agent).toEqual({ name: 'verifiers' });
    expect(first.task.instruction).toMatch(/^Let \\\[f\(x\) = \\left\\\{/);
    expect(first.metadata.systemPrompt).toBe('Use python for all calculations. Give your answer inside \\boxed{}.');
    expect(tools(first)).toEqual(['python', 'python', 'respond']);
    expect(String(step(first, 0).action.params.code)).toMatch(/^from sympy import symbols, Eq, solve/);
    expect(step(first, 0).observation).toContain("ModuleNotFoundError: No module named 'sympy'");
    expect(step(first, 0).metadata?.toolCallEncoding).toBe('json-string');
    expect(step(first, 1).observation).toBe('Out[2]: 0');
    expect(String(step(first, 2).action.params.content)).toContain('\\boxed{0}');
    expect(first.metadata).toMatchObject({ referenceAnswer: '0', reward: 1, exampleId: 0 });
    expect((first.metadata.fields as Record<string, unknown>).correct_answer_reward_func).toBe(1);
    // Lines 1, 6 and 11 pose the same problem under ids 0, 1 and 3: the task id follows the prompt.
    const ids = c.trajectories.map((t) => t.task.id);
    expect(new Set(ids).size).toBe(5);
    expect(ids[5]).toBe(ids[0]);
    expect(ids[10]).toBe(ids[0]);
    expect(c.trajectories[5]?.metadata.exampleId).toBe(1);
  });

  it('mcp-env: web tools', async () => {
    const c = await convertFixture(verifiersAdapter, 'openai-chat/verifiers-mcp-env-gpt-4.1-mini-results.jsonl');
    expect(c.trajectories.map(tools)).toEqual([
      ['fetch', 'respond'],
      ['crawling_exa', 'respond'],
      ['crawling_exa', 'respond'],
    ]);
    const [t] = c.trajectories;
    if (!t) throw new Error('no trajectory');
    expect(step(t, 0).action.params).toEqual({ url: 'https://primeintellect.ai', max_length: 1000 });
    expect(step(t, 0).observation).toMatch(/^Contents of https:\/\/primeintellect.ai\/:/);
    expect(String(step(t, 1).action.params.content)).toContain('Environments Hub');
    expect(t.task.instruction).toMatch(/^Find out what Prime Intellect's newest announcement was/);
    expect((t.metadata.fields as Record<string, unknown>).judge_reward).toBe(1);
    expect(t.outcome).toMatchObject({ success: true, score: 1 });
  });

  it('reports a line that fails the rollout shape with its line and JSON path, and converts the rest', async () => {
    const lines = (await readFile(fixture('openai-chat/verifiers-mcp-env-gpt-4.1-mini-results.jsonl'), 'utf8')).split('\n');
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-verifiers-'));
    const path = join(dir, 'results.jsonl');
    await writeFile(path, [lines[0], '{"prompt": [], "completion": 7}', 'not json', lines[1]].join('\n'));
    const c = await collect(verifiersAdapter.convert(path, { file: path, options: {} }));
    expect(c.trajectories).toHaveLength(2);
    expect(c.errors.map((p) => [p.line, p.path])).toEqual([[2, '$.completion'], [3, '$']]);
  });
});
