import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toolCallText } from '../core/chat/prompt.js';
import { ConfigError } from '../core/errors.js';
import { make } from '../core/registry.js';
import { runEpisode } from '../core/rollout.js';
import type { Action } from '../core/types.js';
import { registerBuiltinEnvs } from '../envs/register.js';
import { canonicalJson } from '../core/canonical.js';
import { LoopbackApi, openaiCompletion, openaiError, type RecordedRequest } from '../reward/judge/__fixtures__/loopback-api.js';
import { RetriesExhaustedError } from '../core/retry.js';
import { ExpertOracle } from '../../tests/support/expert-oracle.js';
import { OpenAIPolicy, type OpenAIPolicyOptions } from './openai.js';
import { parseOpenAISpec, resolveAgent } from './specs.js';
import { INVALID_TOOL_CALL } from './tool-call-parsing.js';
import { taskStepSeed } from './usage.js';

const ENV = 'gymflow/tool-use-v0';
const SEED = 11;
beforeAll(() => registerBuiltinEnvs());

let api: LoopbackApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

interface Msg {
  role: string;
  content: string | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}
interface Body {
  model: string;
  messages: Msg[];
  tools?: { type: string; function: { name: string } }[];
  logprobs?: boolean;
  seed?: number;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
}
const body = (r: RecordedRequest): Body => r.body as Body;

/** A chat completion answering with text (text mode) or a tool call (native mode), with log-probs and vLLM token ids. */
function completion(options: { text?: string | null; call?: Action; step: number }): Record<string, unknown> {
  const tokens = [101 + options.step, 202, 303];
  return {
    id: `chatcmpl-${options.step}`,
    object: 'chat.completion',
    created: 0,
    model: 'policy-test',
    choices: [
      {
        index: 0,
        finish_reason: options.call ? 'tool_calls' : 'stop',
        logprobs: { content: tokens.map((t, i) => ({ token: `token_id:${t}`, logprob: -0.1 * (i + 1), bytes: null, top_logprobs: [] })), refusal: null },
        token_ids: tokens,
        message: {
          role: 'assistant',
          content: options.text ?? null,
          refusal: null,
          ...(options.call ? { tool_calls: [{ id: `srv_${options.step}`, type: 'function', function: { name: options.call.tool, arguments: JSON.stringify(options.call.params) } }] } : {}),
        },
      },
    ],
    usage: { prompt_tokens: 50, completion_tokens: 3, total_tokens: 53 },
  };
}

async function expertActions(): Promise<Action[]> {
  const t = await runEpisode(make(ENV), resolveAgent('expert', ENV), { envId: ENV, seed: SEED });
  return t.steps.map((s) => s.action);
}

function policy(url: string, extra: Partial<OpenAIPolicyOptions> = {}): OpenAIPolicy {
  return new OpenAIPolicy({ model: 'policy-test', apiKey: 'EMPTY', baseURL: `${url}/v1`, envId: ENV, sleep: async () => undefined, ...extra });
}

describe('OpenAIPolicy against a loopback server', () => {
  it('text mode: plays an episode with <tool_call> text, feeds tool results back, records log-probs and token ids', async () => {
    const box: { oracle?: ExpertOracle } = {};
    api = await LoopbackApi.start(async (_r, i) => {
      const call = await (box.oracle as ExpertOracle).next();
      return { body: completion({ text: `Step ${i}: I call ${call.tool}.\n\n${toolCallText(call.tool, call.params)}`, step: i }) };
    });
    const agent = policy(api.url, { temperature: 0.7, topP: 0.9, seed: 5, maxTokens: 256 });
    const oracle = (box.oracle = new ExpertOracle(agent));
    const t = await runEpisode(make(ENV), oracle, { envId: ENV, seed: SEED });

    expect(t.steps.map((s) => s.action)).toEqual(await expertActions());
    expect(t.outcome.score).toBe(1);
    expect(t.agent.name).toBe('openai:policy-test');
    t.steps.forEach((s, i) => {
      expect(s.thought).toBe(`Step ${i}: I call ${s.action.tool}.`);
      expect(s.logprobs).toEqual([-0.1, -0.2, expect.closeTo(-0.3, 10)]);
      expect(s.tokens).toEqual({ completion: [101 + i, 202, 303] });
      expect(s.error).toBeUndefined();
    });

    const reqs = api.to('/v1/chat/completions');
    expect(reqs).toHaveLength(t.steps.length);
    reqs.forEach((r, k) => {
      const b = body(r);
      expect(r.headers.authorization).toBe('Bearer EMPTY');
      expect(b).toMatchObject({ model: 'policy-test', logprobs: true, temperature: 0.7, top_p: 0.9, max_tokens: 256 });
      expect(typeof b.seed).toBe('number');
      expect(b.tools).toBeUndefined();
      expect(b.messages).toHaveLength(2 + 2 * k);
      expect(b.messages[0]?.role).toBe('system');
      expect(b.messages[0]?.content).toContain('<tool_call>');
      expect(b.messages[0]?.content).toContain('"name":"calculator"');
      expect(b.messages[1]).toEqual({ role: 'user', content: t.task.instruction });
      for (let j = 0; j < k; j++) {
        const step = t.steps[j];
        if (!step) throw new Error('missing step');
        expect(b.messages[2 + 2 * j]).toEqual({ role: 'assistant', content: `Step ${j}: I call ${step.action.tool}.\n\n${toolCallText(step.action.tool, step.action.params)}` });
        expect(b.messages[3 + 2 * j]).toEqual({ role: 'tool', tool_call_id: `call_${j}`, content: step.observation });
      }
    });
    // The seed differs per step but is reproducible, and the task's id is in it: member g of one task's GRPO group
    // (the same episode seed) draws differently from member g of another task's.
    const seeds = reqs.map((r) => body(r).seed);
    expect(seeds).toEqual(reqs.map((_r, k) => taskStepSeed(5, SEED, k, t.task.id)));
    expect(new Set(seeds).size).toBe(reqs.length);
    expect(seeds[0]).not.toBe(taskStepSeed(5, SEED, 0, `${t.task.id}-other`));
    expect(agent.usage).toMatchObject({ steps: t.steps.length, requests: t.steps.length, retries: 0, promptTokens: 50 * t.steps.length, completionTokens: 3 * t.steps.length, invalidCalls: 0 });
  });

  it('native mode: sends tools as functions and structured tool_calls, reads tool_calls', async () => {
    const box: { oracle?: ExpertOracle } = {};
    api = await LoopbackApi.start(async (_r, i) => ({ body: completion({ text: i === 0 ? 'Let me look.' : null, call: await (box.oracle as ExpertOracle).next(), step: i }) }));
    const agent = policy(api.url, { mode: 'native' });
    const oracle = (box.oracle = new ExpertOracle(agent));
    const t = await runEpisode(make(ENV), oracle, { envId: ENV, seed: SEED });
    expect(t.steps.map((s) => s.action)).toEqual(await expertActions());
    expect(t.steps[0]?.thought).toBe('Let me look.');
    expect(t.steps[1]?.thought).toBeUndefined();
    expect(t.steps[0]?.logprobs).toHaveLength(3);

    const reqs = api.to('/v1/chat/completions');
    const first = body(reqs[0] as RecordedRequest);
    expect(first.tools?.map((x) => x.function.name).sort()).toEqual(['calculator', 'lookup', 'search', 'submit']);
    expect(first.tools?.every((x) => x.type === 'function')).toBe(true);
    const last = body(reqs[reqs.length - 1] as RecordedRequest);
    const s0 = t.steps[0];
    if (!s0) throw new Error('no step');
    expect(last.messages[2]).toEqual({
      role: 'assistant',
      content: 'Let me look.',
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: s0.action.tool, arguments: canonicalJson(s0.action.params) } }],
    });
    expect(last.messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_0', content: s0.observation });
    expect(last.messages.slice(4).filter((m) => m.role === 'assistant').every((m) => m.content === null)).toBe(true);
    expect(last.messages).toHaveLength(2 + 2 * (t.steps.length - 1));
  });

  it('a malformed output becomes an invalid-call step; the model is told why and the episode goes on', async () => {
    const box: { oracle?: ExpertOracle } = {};
    api = await LoopbackApi.start(async (_r, i) => {
      if (i === 0) return { body: completion({ text: 'I think <tool_call>{"name": "lookup", "arguments": {oops}</tool_call>', step: i }) };
      const call = await (box.oracle as ExpertOracle).next();
      return { body: completion({ text: toolCallText(call.tool, call.params), step: i }) };
    });
    const agent = policy(api.url);
    const oracle = (box.oracle = new ExpertOracle(agent));
    const t = await runEpisode(make(ENV), oracle, { envId: ENV, seed: SEED });
    const s0 = t.steps[0];
    expect(s0?.action.tool).toBe(INVALID_TOOL_CALL);
    expect(s0?.error?.code).toBe('unknown_tool');
    expect(s0?.observation).toMatch(/available tools: /);
    expect(s0?.thought).toBe('I think');
    expect(t.outcome.score).toBe(1);
    expect(agent.usage.invalidCalls).toBe(1);
    const second = body(api.requests[1] as RecordedRequest);
    expect(second.messages[2]).toEqual({ role: 'assistant', content: 'I think <tool_call>{"name": "lookup", "arguments": {oops}</tool_call>' });
    expect(second.messages[3]?.role).toBe('tool');
    expect(second.messages[3]?.content).toMatch(/^Error: your tool call could not be parsed: the tool call is not valid JSON.*\nError: unknown tool '__invalid_tool_call__'; available tools: /s);
  });

  it('retries 429 and 500 with backoff, then succeeds', async () => {
    const replies = [
      { status: 429, body: openaiError('slow down', 'rate_limit_error'), headers: { 'retry-after-ms': '1' } },
      { status: 500, body: openaiError('boom', 'server_error') },
    ];
    api = await LoopbackApi.start((_r, i) => replies[i] ?? { body: completion({ text: toolCallText('submit', { answer: '1' }), step: i }) });
    const waits: number[] = [];
    const agent = policy(api.url, { sleep: async (ms) => void waits.push(ms) });
    const t = await runEpisode(make(ENV), agent, { envId: ENV, seed: SEED });
    expect(t.steps.map((s) => s.action)).toEqual([{ tool: 'submit', params: { answer: '1' } }]);
    expect(api.requests).toHaveLength(3);
    expect(waits).toHaveLength(2);
    expect(agent.usage).toMatchObject({ requests: 3, retries: 2 });
  });

  it('gives up after the retry budget, and does not retry a 400', async () => {
    api = await LoopbackApi.start(() => ({ status: 503, body: openaiError('down', 'server_error') }));
    const agent = policy(api.url, { retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 } });
    await expect(runEpisode(make(ENV), agent, { envId: ENV, seed: SEED })).rejects.toThrow(RetriesExhaustedError);
    expect(api.requests).toHaveLength(3);
    await api.close();
    api = await LoopbackApi.start(() => ({ status: 400, body: openaiError('bad request') }));
    await expect(runEpisode(make(ENV), policy(api.url), { envId: ENV, seed: SEED })).rejects.toThrow(/400/);
    expect(api.requests).toHaveLength(1);
  });

  it('a prompt over the model’s context is an invalid-call step, as with the local policy, not a failed episode', async () => {
    api = await LoopbackApi.start(() => ({ status: 400, body: openaiError("This model's maximum context length is 2048 tokens. However, you requested 2300 tokens.") }));
    const agent = policy(api.url);
    const t = await runEpisode(make(ENV, { maxEpisodeSteps: 2 }), agent, { envId: ENV, seed: SEED });
    expect(t.outcome).toMatchObject({ success: false, truncated: true });
    expect(t.steps.map((s) => s.action.tool)).toEqual([INVALID_TOOL_CALL, INVALID_TOOL_CALL]);
    expect(t.steps[0]?.action.params['error']).toMatch(/^context overflow: openai \(policy-test at http:\/\/127\.0\.0\.1:\d+\/v1\): HTTP 400 This model's maximum context length is 2048 tokens/);
    expect(t.steps[0]?.tokens).toBeUndefined(); // nothing was sampled: nothing for RL to train on
    expect(agent.usage).toMatchObject({ requests: 2, steps: 2, invalidCalls: 2 });
  });

  it('times out a hanging server (bounded) and reports it', async () => {
    api = await LoopbackApi.start(() => ({ hang: true }));
    const agent = policy(api.url, { timeoutMs: 50, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    await expect(runEpisode(make(ENV), agent, { envId: ENV, seed: SEED })).rejects.toThrow(/timed out/);
    expect(api.requests).toHaveLength(2);
    await api.close();

    // A reply whose body stops halfway (the SDK's own timeout ends with the headers) times out the same way.
    api = await LoopbackApi.start(() => ({ stallBody: true, body: openaiCompletion('<tool_call>\n{"name":"submit","arguments":{"answer":"1"}}\n</tool_call>') }));
    const stalled = policy(api.url, { timeoutMs: 200, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    await expect(runEpisode(make(ENV), stalled, { envId: ENV, seed: SEED })).rejects.toThrow(/openai \(policy-test at http:\/\/127\.0\.0\.1:\d+\/v1\): request timed out: no complete response within 200 ms \(gave up after 2 attempts\)/);
    expect(api.requests).toHaveLength(2);
  });
});

describe('openai: agent specs', () => {
  it('parses MODEL[@BASE_URL]', () => {
    expect(parseOpenAISpec('gpt-4o')).toEqual({ model: 'gpt-4o' });
    expect(parseOpenAISpec('Qwen/Qwen2.5-7B@http://localhost:8000/v1')).toEqual({ model: 'Qwen/Qwen2.5-7B', baseURL: 'http://localhost:8000/v1' });
    expect(parseOpenAISpec('m@x@http://h:8000')).toEqual({ model: 'm@x', baseURL: 'http://h:8000/v1' });
    expect(() => parseOpenAISpec('@http://h')).toThrow(ConfigError);
    expect(() => parseOpenAISpec('m@http://')).toThrow(/not a valid URL/);
  });

  it('needs OPENAI_API_KEY, accepts EMPTY, and drives a server named in the spec', async () => {
    expect(() => resolveAgent('openai:m', ENV, { env: {} })).toThrow(ConfigError);
    expect(() => resolveAgent('openai:m', ENV, { env: {} })).toThrow(/set OPENAI_API_KEY .*EMPTY/);
    api = await LoopbackApi.start((_r, i) => ({ body: completion({ text: toolCallText('submit', { answer: 'x' }), step: i }) }));
    const agent = resolveAgent(`openai:served-model@${api.url}`, ENV, { env: { OPENAI_API_KEY: 'EMPTY' }, seed: 3, openai: { sleep: async () => undefined } });
    expect(agent).toBeInstanceOf(OpenAIPolicy);
    await runEpisode(make(ENV), agent, { envId: ENV, seed: SEED });
    expect(body(api.requests[0] as RecordedRequest)).toMatchObject({ model: 'served-model' });
    expect(api.requests[0]?.path).toBe('/v1/chat/completions');
  });

  it('lists the spec forms in the unknown-agent error and keeps random/expert working', () => {
    expect(() => resolveAgent('gpt', ENV)).toThrow(/available: random, openai:MODEL\[@BASE_URL\], anthropic:MODEL, local:DIR, expert/);
    expect(resolveAgent('random', ENV, { seed: 1 }).info.name).toBe('random');
    expect(resolveAgent('expert', ENV).info.name).toBe('tool-use-expert');
  });
});
