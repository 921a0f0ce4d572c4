import { beforeAll, describe, expect, it } from 'vitest';
import { requires } from '../../../tests/support/requires.js';
import { make } from '../../core/registry.js';
import { runEpisode } from '../../core/rollout.js';
import { RandomAgent } from '../../policy/random.js';
import { registerBuiltinEnvs } from '../register.js';
import { TOOL_USE_ENV_ID, TOOL_USE_PYTHON_ENV_ID } from './env.js';
import { listToolTasks } from './tasks.js';
import { parseCalculatorObservation, parseLookupObservation, parseSearchObservation, ToolUseExpert } from './expert.js';

beforeAll(() => registerBuiltinEnvs());

describe('ToolUseExpert', () => {
  it('parses tool observations', () => {
    expect(parseLookupObservation('Azure Carafe (product) — price: 42.50 crowns')).toBe('42.50 crowns');
    expect(parseLookupObservation("No entity named 'X' in the knowledge base.")).toBeUndefined();
    const results = 'Top 2 results for "q":\n1. [topic-x] Glass (topic) — …\n2. [city-velmora] Velmora (city) — A river port.';
    expect(parseSearchObservation(results, 'city')).toBe('Velmora');
    expect(parseSearchObservation(results, 'person')).toBeUndefined();
    expect(parseCalculatorObservation('Result: 36.13')).toBe('36.13');
  });

  it('solves at least 95% of the held-out split through the tools', async () => {
    const env = make(TOOL_USE_ENV_ID);
    const tasks = env.listTasks?.('heldout') ?? [];
    expect(tasks.length).toBeGreaterThanOrEqual(60);
    let solved = 0;
    const toolsUsed = new Set<string>();
    for (const task of tasks) {
      const trajectory = await runEpisode(env, new ToolUseExpert(), { envId: TOOL_USE_ENV_ID, task: task.id, seed: 0 });
      for (const step of trajectory.steps) toolsUsed.add(step.action.tool);
      expect(trajectory.steps.every((s) => s.error === undefined)).toBe(true);
      expect(trajectory.steps.at(-1)?.action.tool).toBe('submit');
      if (trajectory.outcome.success) solved += 1;
    }
    expect(solved / tasks.length).toBeGreaterThanOrEqual(0.95);
    expect(toolsUsed).toEqual(new Set(['lookup', 'search', 'calculator', 'submit']));
    await env.close();
  });

  it('uses observations, not stored answers: a wrong observation leads to a wrong answer', async () => {
    const expert = new ToolUseExpert();
    const sum = listToolTasks('heldout').find((t) => t.kind === 'sum' && t.refs[0]?.attribute === 'population');
    const [a, b] = (sum?.refs ?? []).map((r) => ('entity' in r.from ? r.from.entity : ''));
    const task = { id: sum?.id ?? '', domain: 'tool-use', instruction: '' };
    expert.reset(task);
    const ctx = { task, tools: [], history: [] };
    const first = await expert.act({ ...ctx, observation: '', stepIndex: 0 });
    expect(first.action).toEqual({ tool: 'lookup', params: { entity: a, attribute: 'population' } });
    const second = await expert.act({ ...ctx, observation: `${a} (city) — population: 1`, stepIndex: 1 });
    expect(second.action).toEqual({ tool: 'lookup', params: { entity: b, attribute: 'population' } });
    const third = await expert.act({ ...ctx, observation: `${b} (city) — population: 2`, stepIndex: 2 });
    expect(third.action).toEqual({ tool: 'calculator', params: { expression: '1 + 2' } });
    const last = await expert.act({ ...ctx, observation: 'Result: 3', stepIndex: 3 });
    expect(last.action).toEqual({ tool: 'submit', params: { answer: '3' } });
  });
});

requires.docker().describe('ToolUseExpert on gymflow/tool-use-python-v0', () => {
  it('solves at least 95% of the held-out split, python kinds included, through the five tools', async () => {
    const env = make(TOOL_USE_PYTHON_ENV_ID);
    const tasks = env.listTasks?.('heldout') ?? [];
    expect(tasks.filter((t) => t.id.startsWith('tool-python-')).length).toBeGreaterThanOrEqual(40);
    let solved = 0;
    let solvedPython = 0;
    const toolsUsed = new Set<string>();
    for (const task of tasks) {
      const trajectory = await runEpisode(env, new ToolUseExpert(), { envId: TOOL_USE_PYTHON_ENV_ID, task: task.id, seed: 0 });
      for (const step of trajectory.steps) toolsUsed.add(step.action.tool);
      expect(trajectory.steps.every((s) => s.error === undefined), task.id).toBe(true);
      if (trajectory.outcome.success) solved += 1;
      if (trajectory.outcome.success && task.id.startsWith('tool-python-')) solvedPython += 1;
      // The python kinds are solved with python: the answer is the value of a python call.
      if (task.id.startsWith('tool-python-')) expect(trajectory.steps.at(-2)?.action.tool, task.id).toBe('python');
    }
    expect(solved / tasks.length).toBeGreaterThanOrEqual(0.95);
    expect(solvedPython / tasks.filter((t) => t.id.startsWith('tool-python-')).length).toBeGreaterThanOrEqual(0.95);
    expect(toolsUsed).toEqual(new Set(['lookup', 'search', 'calculator', 'python', 'submit']));
    await env.close();
  });

  it('leaves the random agent at most 15% of the held-out split', async () => {
    const env = make(TOOL_USE_PYTHON_ENV_ID);
    const tasks = env.listTasks?.('heldout') ?? [];
    let successes = 0;
    for (const [i, task] of tasks.entries()) {
      const trajectory = await runEpisode(env, new RandomAgent({ seed: 1 }), { envId: TOOL_USE_PYTHON_ENV_ID, task: task.id, seed: i });
      if (trajectory.outcome.success) successes += 1;
    }
    expect(successes / tasks.length).toBeLessThanOrEqual(0.15);
    await env.close();
  });
});
