import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { checkEnv } from '../../core/check-env.js';
import { make, spec } from '../../core/registry.js';
import { runEpisode } from '../../core/rollout.js';
import { isDone } from '../../core/types.js';
import { evaluate } from '../../eval/evaluate.js';
import { collect } from '../../hub/collect.js';
import { resolveAgent } from '../../policy/specs.js';
import { registerBuiltinEnvs } from '../register.js';
import { registerOpenEnv } from './register.js';
import { serveEnv, type ServedEnv } from './serve.js';

let served: ServedEnv;
beforeAll(async () => {
  registerBuiltinEnvs();
  served = await serveEnv({ envId: 'gymflow/household-v0', port: 0, maxSessions: 3 });
});
afterAll(async () => {
  await served.close();
});

async function http(path: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${served.url}${path}`, init);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}
const post = (path: string, body: string): Promise<{ status: number; body: Record<string, unknown> }> =>
  http(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

/** A raw client of `/ws`: each `ask` sends a message (text as it is) and resolves with the parsed answer. */
async function rawSession(): Promise<{ ask: (message: unknown) => Promise<Record<string, unknown>>; ws: WebSocket }> {
  const ws = new WebSocket(`${served.url.replace('http', 'ws')}/ws`);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const ask = (message: unknown): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      ws.once('message', (raw) => resolve(JSON.parse(String(raw)) as Record<string, unknown>));
      ws.send(typeof message === 'string' ? message : JSON.stringify(message));
    });
  return { ask, ws };
}

describe('serveEnv: HTTP', () => {
  it("answers OpenEnv's endpoints: health, metadata, schema, state", async () => {
    expect(await http('/health')).toEqual({ status: 200, body: { status: 'healthy' } });
    expect((await http('/metadata')).body).toMatchObject({ name: 'gymflow/household-v0', description: spec('gymflow/household-v0').description });
    const schema = (await http('/schema')).body as { action: { oneOf: { properties: { tool: { const: string } } }[] }; observation: object; state: object };
    expect(schema.action.oneOf.map((b) => b.properties.tool.const)).toEqual(make('gymflow/household-v0').tools.map((t) => t.name));
    expect(schema.observation).toMatchObject({ required: ['text', 'terminated', 'truncated', 'info'] });
    expect((await http('/state')).body).toMatchObject({ episode_id: null, step_count: 0 });
  });

  it('describes the environment at /gymflow: id, domain, step limit, both task lists', async () => {
    const { body } = await http('/gymflow');
    expect(body).toMatchObject({ env_id: 'gymflow/household-v0', domain: 'household', max_episode_steps: 50 });
    const tasks = body.tasks as { train: unknown[]; heldout: { id: string }[] };
    expect([tasks.train.length, tasks.heldout.length]).toEqual([1200, 240]);
    expect(tasks.heldout[0]?.id).toBe('household-heldout-00000');
  });

  it("resets a fresh environment on POST /reset (stateless, as OpenEnv's), with a task and a seed", async () => {
    const { status, body } = await post('/reset', JSON.stringify({ seed: 3, task: 'household-heldout-00002', episode_id: 'e1' }));
    expect(status).toBe(200);
    const local = await make('gymflow/household-v0').reset({ seed: 3, task: 'household-heldout-00002' });
    expect(body).toEqual({ observation: { text: local.observation, terminated: false, truncated: false, info: JSON.parse(JSON.stringify(local.info)) as object }, reward: 0, done: false });
    expect((await post('/reset', '')).status).toBe(200);
    expect(await post('/reset', '{"seed": "x"}')).toEqual({ status: 422, body: { detail: [{ loc: ['body', 'seed'], msg: 'Invalid input: expected number, received string', type: 'invalid_type' }] } });
    expect((await post('/reset', '{"task": "nope"}')).status).toBe(422);
    expect((await post('/reset', '{')).body.detail).toMatch(/^body is not JSON: /);
  });

  it('refuses POST /step: 422 for a malformed action, else 409 pointing at the WebSocket session', async () => {
    expect((await post('/step', JSON.stringify({ action: { params: {} } }))).body).toEqual({ detail: [{ loc: ['body', 'action', 'tool'], msg: 'Invalid input: expected string, received undefined', type: 'invalid_type' }] });
    const r = await post('/step', JSON.stringify({ action: { tool: 'look' } }));
    expect(r.status).toBe(409);
    expect(r.body.detail).toMatch(/Step over the WebSocket session at \/ws\.$/);
  });

  it('answers 404 and 405 as OpenEnv does', async () => {
    expect(await http('/nowhere')).toEqual({ status: 404, body: { detail: 'Not Found' } });
    expect(await post('/health', '{}')).toEqual({ status: 405, body: { detail: 'Method Not Allowed' } });
  });
});

describe('serveEnv: WebSocket sessions', () => {
  it('plays an episode: reset with task and seed, steps as {tool, params}, state, close', async () => {
    const { ask, ws } = await rawSession();
    const reset = await ask({ type: 'reset', data: { seed: 3, task: 'household-heldout-00002', episode_id: 'ep-1' } });
    expect(reset).toMatchObject({ type: 'observation', data: { done: false, reward: 0, observation: { info: { task: { id: 'household-heldout-00002' } } } } });
    const look = await ask({ type: 'step', data: { tool: 'look' } });
    expect(look).toMatchObject({ type: 'observation', data: { done: false, observation: { terminated: false } } });
    const bad = await ask({ type: 'step', data: { tool: 'fly', params: {} } });
    expect(bad).toMatchObject({ type: 'observation', data: { observation: { info: { error: { code: 'unknown_tool' } } } } });
    expect(await ask({ type: 'state' })).toEqual({ type: 'state', data: { episode_id: 'ep-1', step_count: 2, env_id: 'gymflow/household-v0', task_id: 'household-heldout-00002', done: false } });
    const closed = new Promise((resolve) => ws.once('close', resolve));
    ws.send(JSON.stringify({ type: 'close' }));
    expect(await closed).toBe(1000);
  });

  it("answers OpenEnv's error messages: bad JSON, unknown type, invalid message, a step before reset", async () => {
    const { ask, ws } = await rawSession();
    expect(await ask('{')).toMatchObject({ type: 'error', data: { code: 'INVALID_JSON' } });
    expect(await ask({ type: 'jump' })).toEqual({ type: 'error', data: { message: 'Unknown message type: jump', code: 'UNKNOWN_TYPE' } });
    expect(await ask({ type: 'step', data: { params: {} } })).toEqual({
      type: 'error',
      data: { message: 'Invalid action: expected {"tool": NAME, "params": {...}}', code: 'VALIDATION_ERROR', errors: [{ loc: ['data', 'tool'], msg: 'Invalid input: expected string, received undefined', type: 'invalid_type' }] },
    });
    expect(await ask({ type: 'state', extra: 1 })).toMatchObject({ type: 'error', data: { code: 'VALIDATION_ERROR' } });
    expect(await ask({ type: 'step', data: { tool: 'look' } })).toMatchObject({ type: 'error', data: { code: 'EXECUTION_ERROR', message: expect.stringMatching(/before reset/) as string } });
    ws.close();
  });

  it('keeps one environment per connection, and refuses connections past maxSessions', async () => {
    const a = await rawSession();
    const b = await rawSession();
    await a.ask({ type: 'reset', data: { seed: 1, task: 'household-train-00000' } });
    await b.ask({ type: 'reset', data: { seed: 1, task: 'household-train-00001' } });
    await a.ask({ type: 'step', data: { tool: 'look' } });
    expect(((await a.ask({ type: 'state' })).data as { task_id: string }).task_id).toBe('household-train-00000');
    expect(((await b.ask({ type: 'state' })).data as { step_count: number }).step_count).toBe(0);
    const c = await rawSession();
    const d = new WebSocket(`${served.url.replace('http', 'ws')}/ws`);
    const refusal = await new Promise((resolve) => d.once('message', (raw) => resolve(JSON.parse(String(raw)))));
    expect(refusal).toMatchObject({ type: 'error', data: { code: 'CAPACITY_REACHED', max_sessions: 3 } });
    for (const s of [a.ws, b.ws, c.ws]) s.close();
    await expect.poll(() => served.activeSessions).toBe(0);
  });
});

describe("gymflow's OpenEnv client on a served gymflow environment", () => {
  it('plays the same episodes as the environment in-process, and passes checkEnv', async () => {
    await registerOpenEnv('openenv/household-served-v0', { url: served.url }, { replace: true });
    expect(spec('openenv/household-served-v0')).toMatchObject({ domain: 'household', maxEpisodeSteps: 50 });
    const remote = make('openenv/household-served-v0');
    expect(remote.tools).toEqual(make('gymflow/household-v0').tools);
    expect(remote.listTasks?.('heldout')).toEqual(make('gymflow/household-v0').listTasks?.('heldout'));
    for (const seed of [1, 2]) {
      const task = `household-heldout-0000${seed}`;
      const expert = spec('openenv/household-served-v0').agents?.expert;
      const there = await runEpisode(remote, expert?.({}) as never, { envId: 'x', seed, task });
      const here = await runEpisode(make('gymflow/household-v0'), expert?.({}) as never, { envId: 'x', seed, task });
      expect(there.outcome).toMatchObject({ success: true, reason: 'goal_reached' });
      expect(there.id).toBe(here.id);
    }
    await remote.close();
    const report = await checkEnv(() => make('openenv/household-served-v0'), { seed: 4 });
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
  });

  it('collects and evaluates through the registry, as the pipeline does', async () => {
    await registerOpenEnv('openenv/household-served-v0', { url: served.url }, { replace: true });
    const { trajectories, summary } = await collect({ envId: 'openenv/household-served-v0', agent: 'expert', resolveAgent, n: 4, concurrency: 2, seed: 1 });
    expect(trajectories.map((t) => t.outcome.success)).toEqual([true, true, true, true]);
    expect(summary).toMatchObject({ episodes: 4 });
    const result = await evaluate({ envId: 'openenv/household-served-v0', agent: 'expert', resolveAgent, n: 3, resamples: 100 });
    expect(result.episodes.map((e) => [e.taskId, e.success])).toEqual([
      ['household-heldout-00000', true],
      ['household-heldout-00001', true],
      ['household-heldout-00002', true],
    ]);
  });

  it('ends the episode truncated, reason server_gone, when the server stops mid-episode', async () => {
    const own = await serveEnv({ envId: 'gymflow/text-math-v0', port: 0 });
    await registerOpenEnv('openenv/math-served-v0', { url: own.url }, { replace: true });
    const env = make('openenv/math-served-v0');
    await env.reset({ seed: 1 });
    const think = await env.step({ tool: 'think', params: { thought: 'hmm' } });
    expect(isDone(think)).toBe(false);
    await own.close();
    const ts = await env.step({ tool: 'submit', params: { answer: '1' } });
    expect(ts).toMatchObject({ terminated: false, truncated: true, info: { reason: 'server_gone' } });
    expect(ts.observation).toMatch(/^The episode ended: ws:\/\/127\.0\.0\.1:\d+\/ws: the OpenEnv server closed the connection \(code 1006\)$/);
    await env.close();
  });
});
