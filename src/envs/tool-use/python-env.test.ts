import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requires } from '../../../tests/support/requires.js';
import { TaskError } from '../../core/errors.js';
import { make } from '../../core/registry.js';
import type { TaskInfo } from '../../core/types.js';
import { dockerClient, ownedSandboxIds } from '../../sandbox/index.js';
import { registerBuiltinEnvs } from '../register.js';
import { TOOL_USE_PYTHON_ENV_ID, ToolUseEnv } from './env.js';
import { expectedBankAnswer, listBankTasks } from './task-bank.js';
import { formatExpected } from './answer.js';
import { defaultKnowledgeBase } from './knowledge-base.js';

beforeAll(() => registerBuiltinEnvs());

const PY_TASK = 'tool-python-heldout-00000';

describe('gymflow/tool-use-python-v0 (no sandbox needed)', () => {
  it('has the four tools of the Nano-SkyRL design and submit, in a domain of its own', async () => {
    const env = make(TOOL_USE_PYTHON_ENV_ID);
    expect(env.domain).toBe('tool-use-python');
    expect(env.tools.map((t) => `${t.name}:${t.category}`)).toEqual(['lookup:read', 'search:search', 'calculator:execute', 'python:execute', 'submit:submit']);
    const ts = await env.reset({ task: PY_TASK });
    expect(ts.info.task as TaskInfo).toMatchObject({ id: PY_TASK, domain: 'tool-use-python', split: 'heldout' });
    expect(ts.observation).toContain('python(code) runs Python');
    await env.close();
  });

  it('lists the base tasks and then the python kinds; the base variant neither lists nor runs python tasks', async () => {
    const env = new ToolUseEnv({ python: true });
    const heldout = env.listTasks('heldout');
    expect(heldout.map((t) => t.id)).toEqual(listBankTasks(true, 'heldout').map((t) => t.id));
    expect(env.countTasks('heldout')).toBe(heldout.length);
    expect(heldout.filter((t) => t.id.startsWith('tool-python-')).map((t) => t.metadata?.['kind'])).toContain('date-diff');
    const base = new ToolUseEnv();
    expect(base.listTasks().some((t) => t.id.startsWith('tool-python-'))).toBe(false);
    await expect(base.reset({ task: PY_TASK })).rejects.toBeInstanceOf(TaskError);
  });

  it('reads tables and dates with lookup; the base variant does not', async () => {
    const env = new ToolUseEnv({ python: true });
    await env.reset({ task: PY_TASK });
    const table = await env.step({ tool: 'lookup', params: { entity: 'cities', attribute: 'region, population' } });
    expect(table.observation.split('\n')[0]).toBe('Table of 14 cities:');
    expect((await env.step({ tool: 'lookup', params: { entity: 'Orla Venn', attribute: 'birth_date' } })).observation).toBe('Orla Venn (person) — birth_date: 1889-07-20');
    const base = new ToolUseEnv();
    await base.reset({ seed: 1 });
    expect((await base.step({ tool: 'lookup', params: { entity: 'cities', attribute: 'population' } })).observation).toMatch(/^No entity named 'cities'/);
  });

  it('validates the python limits and names the variant in the error', () => {
    expect(() => make(TOOL_USE_PYTHON_ENV_ID, { kwargs: { python: { timeoutS: -1 } } })).toThrow(/^gymflow\/tool-use-python-v0: invalid options: python/);
    expect(() => new ToolUseEnv({ python: { memoryMiB: 512, typo: 1 } })).toThrow(/invalid options/);
    expect(new ToolUseEnv({ python: { timeoutS: 2 } }).tools.find((t) => t.name === 'python')?.description).toMatch(/2 s and 512 MiB per call/);
  });
});

requires.docker().describe('gymflow/tool-use-python-v0 with its sandbox', () => {
  let env: ToolUseEnv;
  beforeAll(() => {
    env = new ToolUseEnv({ python: { timeoutS: 2 } });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('runs python calls: a value is an observation, code that raises costs the invalid-call penalty', async () => {
    await env.reset({ task: PY_TASK });
    const ok = await env.step({ tool: 'python', params: { code: 'n = 6\nprint("six")\nn * 7' } });
    expect(ok).toMatchObject({ observation: 'stdout:\nsix\nvalue: 42', reward: 0, terminated: false, info: { python: { status: 'ok', restarted: false } } });
    expect(ok.info.error).toBeUndefined();
    const bad = await env.step({ tool: 'python', params: { code: 'n / 0' } });
    expect(bad).toMatchObject({ reward: -0.05, info: { error: { code: 'tool_failed', message: 'python: ZeroDivisionError: division by zero' }, penalty: 0.05 } });
    expect(bad.observation).toMatch(/^Error: python: ZeroDivisionError: division by zero\nTraceback/);
    const loop = await env.step({ tool: 'python', params: { code: 'while True: pass' } });
    expect(loop).toMatchObject({ reward: -0.05, info: { python: { status: 'timeout', restarted: true } } });
    expect((await env.step({ tool: 'python', params: { code: '1 + 1' } })).observation).toBe('value: 2');
  });

  it("starts every episode's python from nothing", async () => {
    await env.reset({ task: PY_TASK });
    await env.step({ tool: 'python', params: { code: "secret = 'one'\nopen('/work/note', 'w').write(secret)" } });
    await env.reset({ task: PY_TASK });
    const after = await env.step({ tool: 'python', params: { code: "import os\n(os.listdir('/work'), 'secret' in globals())" } });
    expect(after.observation).toBe('value: ([], False)');
  });

  it('scores a submitted answer as the base variant does', async () => {
    await env.reset({ task: PY_TASK });
    const expected = formatExpected(expectedBankAnswer(listBankTasks(true, 'heldout').find((t) => t.id === PY_TASK)!, defaultKnowledgeBase()));
    expect(await env.step({ tool: 'submit', params: { answer: expected } })).toMatchObject({ reward: 1, terminated: true, info: { success: true, score: 1 } });
  });

  it('removes its container on close', async () => {
    const own = new ToolUseEnv({ python: true });
    await own.reset({ task: PY_TASK });
    const before = new Set(ownedSandboxIds());
    await own.step({ tool: 'python', params: { code: '1' } });
    const started = ownedSandboxIds().filter((id) => !before.has(id));
    expect(started).toHaveLength(1);
    await own.close();
    expect(ownedSandboxIds()).not.toContain(started[0]);
    await expect(dockerClient().getContainer(started[0] as string).inspect()).rejects.toThrow(/no such container/i);
  });
});
