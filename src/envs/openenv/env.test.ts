import { afterEach, describe, expect, it } from 'vitest';
import { make } from '../../core/registry.js';
import type { AgentEnv } from '../../core/types.js';
import { defaultAnswer, startScriptedServer, type Script, type ScriptedServer } from './__fixtures__/scripted-server.js';
import { OpenEnvEnv } from './env.js';
import { OpenEnvProtocolError } from './errors.js';
import { parseOpenEnvOptions, type OpenEnvOptionsInput } from './options.js';
import { registerOpenEnv } from './register.js';
import { describeOpenEnv } from './server-info.js';

let server: ScriptedServer | undefined;
const envs: AgentEnv[] = [];
afterEach(async () => {
  for (const e of envs.splice(0)) await e.close();
  await server?.close();
  server = undefined;
});

async function envOn(script: Script, options: Omit<OpenEnvOptionsInput, 'url'> = {}): Promise<OpenEnvEnv> {
  server = await startScriptedServer(script);
  const env = new OpenEnvEnv(await describeOpenEnv(server.url), parseOpenEnvOptions({ url: server.url, ...options }, 'test'));
  envs.push(env);
  return env;
}

describe('OpenEnvEnv on a server of plain OpenEnv actions', () => {
  it("plays an episode: the action's fields sent as they are, the seed as given, a task made from it", async () => {
    const env = await envOn({});
    expect(env.tools.map((t) => [t.name, t.category])).toEqual([['act', 'submit']]);
    expect(env.domain).toBe('generic');
    expect(env.listTasks).toBeUndefined();
    const first = await env.reset({ seed: 5 });
    expect(first).toMatchObject({ observation: 'Say a word.', reward: 0, terminated: false, info: { task: { id: 'wordenvironment-seed-5', domain: 'generic', instruction: 'Say a word.' } } });
    const last = await env.step({ tool: 'act', params: { word: 'hi' } });
    expect(last).toMatchObject({ observation: 'Thanks.', reward: 1, terminated: true, truncated: false, info: { reason: 'done', success: true, score: 1 } });
    expect(server?.received).toEqual([{ type: 'reset', data: { seed: 5 } }, { type: 'step', data: { word: 'hi' } }]);
    expect(await env.state()).toEqual({ step_count: 1 });
  });

  it('checks actions before sending them: an invalid one is an observation and never reaches the server', async () => {
    const env = await envOn({});
    await env.reset({ seed: 1 });
    const bad = await env.step({ tool: 'act', params: { word: 3 } });
    expect(bad).toMatchObject({ terminated: false, info: { error: { code: 'invalid_params' } } });
    expect(server?.received.map((m) => m.type)).toEqual(['reset']);
  });

  it('without a seed draws one from its RNG: the same reset seed, the same draws', async () => {
    const env = await envOn({});
    await env.reset({ seed: 9 });
    await env.reset();
    await env.reset({ seed: 9 });
    await env.reset();
    const seeds = (server?.received ?? []).map((m) => m.data?.seed);
    expect(seeds[0]).toBe(9);
    expect(typeof seeds[1]).toBe('number');
    expect(seeds[1]).not.toBe(9);
    expect(seeds[3]).toBe(seeds[1]);
  });

  it('makes train and held-out tasks from reset seeds with the tasks option', async () => {
    const env = await envOn({}, { tasks: { train: 3, heldout: 2 } });
    expect(env.listTasks?.('train').map((t) => t.id)).toEqual(['wordenvironment-train-00000', 'wordenvironment-train-00001', 'wordenvironment-train-00002']);
    expect(env.listTasks?.('heldout').map((t) => t.metadata?.seed)).toEqual([1_000_000, 1_000_001]);
    const first = await env.reset({ seed: 4, task: 'wordenvironment-heldout-00001' });
    expect(first.info.task).toMatchObject({ id: 'wordenvironment-heldout-00001', split: 'heldout', instruction: 'Say a word.' });
    expect(server?.received.at(-1)).toEqual({ type: 'reset', data: { seed: 1_000_001 } });
    await expect(env.reset({ task: 'nope' })).rejects.toThrow(
      "WordEnvironment: unknown task 'nope': expected wordenvironment-train-00000, wordenvironment-train-00001, …, or wordenvironment-seed-<n> (reset with seed n)",
    );
    // The id an episode without a task reports names its seed, so it can be played again.
    expect((await env.reset({ seed: 1, task: 'wordenvironment-seed-77' })).info.task).toMatchObject({ id: 'wordenvironment-seed-77' });
    expect(server?.received.at(-1)).toEqual({ type: 'reset', data: { seed: 77 } });
  });

  it("turns the server's refusals into observations: VALIDATION_ERROR invalid params, EXECUTION_ERROR a failed tool", async () => {
    const codes = ['VALIDATION_ERROR', 'EXECUTION_ERROR'];
    const env = await envOn({
      onMessage: (m, ws) => (m.type === 'step' ? ws.send(JSON.stringify({ type: 'error', data: { message: 'no', code: codes.shift() } })) : defaultAnswer(m, ws)),
    });
    await env.reset({ seed: 1 });
    expect(await env.step({ tool: 'act', params: { word: 'x' } })).toMatchObject({ terminated: false, truncated: false, info: { error: { code: 'invalid_params' } } });
    const failed = await env.step({ tool: 'act', params: { word: 'x' } });
    expect(failed).toMatchObject({ terminated: false, truncated: false, info: { error: { code: 'tool_failed' } } });
    expect(failed.observation).toMatch(/^Error: the action failed on the server: .*the server reports EXECUTION_ERROR: no$/);
  });
});

describe('OpenEnvEnv when the server misbehaves', () => {
  it('ends the episode truncated, reason server_gone, when the server drops the connection mid-episode; the next reset reconnects', async () => {
    const env = await envOn({ onMessage: (m, ws) => (m.type === 'step' ? ws.terminate() : defaultAnswer(m, ws)) });
    await env.reset({ seed: 1 });
    const ts = await env.step({ tool: 'act', params: { word: 'x' } });
    expect(ts).toMatchObject({ reward: 0, terminated: false, truncated: true, info: { reason: 'server_gone', error: { code: 'server_gone' } } });
    expect(ts.observation).toMatch(/^The episode ended: ws:\/\/127\.0\.0\.1:\d+\/ws: the OpenEnv server closed the connection \(code 1006/);
    await expect(env.step({ tool: 'act', params: { word: 'x' } })).rejects.toThrow(/after the episode ended/);
    expect((await env.reset({ seed: 2 })).observation).toBe('Say a word.');
  });

  it('ends the episode truncated, reason timeout, when an answer does not come in time', async () => {
    const env = await envOn({ onMessage: (m, ws) => (m.type === 'step' ? undefined : defaultAnswer(m, ws)) }, { timeoutMs: 300 });
    await env.reset({ seed: 1 });
    const ts = await env.step({ tool: 'act', params: { word: 'x' } });
    expect(ts).toMatchObject({ truncated: true, info: { reason: 'timeout' } });
    expect(ts.observation).toMatch(/no answer to 'step' within 300 ms$/);
  });

  it('throws an error naming the field of a malformed answer, and drops the session', async () => {
    const env = await envOn({
      onMessage: (m, ws) => (m.type === 'step' ? ws.send(JSON.stringify({ type: 'observation', data: { observation: { prompt: 'x' }, reward: 'lots', done: 'yes' } })) : defaultAnswer(m, ws)),
    });
    await env.reset({ seed: 1 });
    const err = await env.step({ tool: 'act', params: { word: 'x' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenEnvProtocolError);
    expect((err as Error).message).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws answer to 'step' \$\.data: malformed answer: \$\.reward: Invalid input; \$\.done: Invalid input: expected boolean, received string$/);
    // The episode cannot go on (the server's state is unknown): the next step says so, a reset starts afresh.
    expect(await env.step({ tool: 'act', params: { word: 'x' } })).toMatchObject({ truncated: true, info: { reason: 'server_gone' } });
  });

  it('refuses a first observation without a task from a gymflow server', async () => {
    const description = { env_id: 'gymflow/x-v0', domain: 'generic', max_episode_steps: 5, tasks: { train: [], heldout: [] } };
    const actions = { oneOf: [{ type: 'object', properties: { tool: { const: 'say' }, params: { type: 'object' } }, 'x-gymflow-category': 'submit' }] };
    const env = await envOn({
      http: { '/gymflow': description, '/schema': { action: actions, observation: {}, state: {} } },
      onMessage: (_m, ws) => ws.send(JSON.stringify({ type: 'observation', data: { observation: { text: 'hi', terminated: false, truncated: false, info: {} }, reward: 0, done: false } })),
    });
    expect(env.tools).toEqual([{ name: 'say', description: '', parameters: { type: 'object' }, category: 'submit' }]);
    await expect(env.reset({ seed: 1 })).rejects.toThrow(/answer to 'reset' \$\.data\.observation\.info\.task: malformed answer: \$: Invalid input: expected object, received undefined$/);
  });
});

describe('registerOpenEnv', () => {
  it('registers an id whose make needs no kwargs, with the options as the spec kwargs', async () => {
    server = await startScriptedServer();
    const info = await registerOpenEnv('openenv/word-test-v0', { url: server.url, toolName: 'say' }, { replace: true });
    expect(info.metadata.name).toBe('WordEnvironment');
    const env = make('openenv/word-test-v0');
    envs.push(env);
    expect(env.tools.map((t) => t.name)).toEqual(['say']);
    await env.reset({ seed: 1 });
    expect(await env.step({ tool: 'say', params: { word: 'x' } })).toMatchObject({ terminated: true });
  });
});
