import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { make } from '../core/registry.js';
import { runEpisode } from '../core/rollout.js';
import type { Action } from '../core/types.js';
import { registerBuiltinEnvs } from '../envs/register.js';
import { LoopbackApi, anthropicError, anthropicText, type RecordedRequest } from '../reward/judge/__fixtures__/loopback-api.js';
import { ExpertOracle } from '../../tests/support/expert-oracle.js';
import { AnthropicPolicy } from './anthropic.js';
import { resolveAgent } from './specs.js';
import { INVALID_TOOL_CALL } from './tool-call-parsing.js';

const ENV = 'gymflow/tool-use-v0';
const SEED = 11;
beforeAll(() => registerBuiltinEnvs());

let api: LoopbackApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown } | { type: 'tool_result'; tool_use_id: string; content: string };
interface Body {
  model: string;
  system: string;
  max_tokens: number;
  messages: { role: string; content: string | Block[] }[];
  tools: { name: string; description: string; input_schema: Record<string, unknown> }[];
  temperature?: number;
}
const body = (r: RecordedRequest): Body => r.body as Body;

function toolUse(call: Action, step: number, thought?: string): Record<string, unknown> {
  return {
    id: `msg_${step}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [...(thought ? [{ type: 'text', text: thought }] : []), { type: 'tool_use', id: `toolu_${step}`, name: call.tool, input: call.params }],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 40, output_tokens: 7 },
  };
}

function policy(url: string): AnthropicPolicy {
  return new AnthropicPolicy({ model: 'claude-test', apiKey: 'sk-test', baseURL: url, envId: ENV, maxTokens: 300, sleep: async () => undefined });
}

describe('AnthropicPolicy against a loopback server', () => {
  it('plays an episode with tool_use, sends tool results back as tool_result blocks', async () => {
    const box: { oracle?: ExpertOracle } = {};
    api = await LoopbackApi.start(async (_r, i) => ({ body: toolUse(await (box.oracle as ExpertOracle).next(), i, `Thinking ${i}`) }));
    const agent = policy(api.url);
    const oracle = (box.oracle = new ExpertOracle(agent));
    const t = await runEpisode(make(ENV), oracle, { envId: ENV, seed: SEED });
    const expert = await runEpisode(make(ENV), resolveAgent('expert', ENV), { envId: ENV, seed: SEED });
    expect(t.steps.map((s) => s.action)).toEqual(expert.steps.map((s) => s.action));
    expect(t.outcome.score).toBe(1);
    t.steps.forEach((s, i) => {
      expect(s.thought).toBe(`Thinking ${i}`);
      expect(s.logprobs).toBeUndefined();
    });

    const reqs = api.to('/v1/messages');
    expect(reqs).toHaveLength(t.steps.length);
    reqs.forEach((r, k) => {
      const b = body(r);
      expect(r.headers['x-api-key'] ?? r.headers.authorization).toBeDefined();
      expect(b.model).toBe('claude-test');
      expect(b.max_tokens).toBe(300);
      expect(b.temperature).toBeUndefined();
      expect(b.system).toContain('# Tools');
      expect(b.tools.map((x) => x.name).sort()).toEqual(['calculator', 'lookup', 'search', 'submit']);
      expect(b.tools.every((x) => x.input_schema.type === 'object')).toBe(true);
      expect(b.messages).toHaveLength(1 + 2 * k);
      expect(b.messages[0]).toEqual({ role: 'user', content: t.task.instruction });
      for (let j = 0; j < k; j++) {
        const step = t.steps[j];
        if (!step) throw new Error('missing step');
        expect(b.messages[1 + 2 * j]).toEqual({
          role: 'assistant',
          content: [
            { type: 'text', text: `Thinking ${j}` },
            { type: 'tool_use', id: `call_${j}`, name: step.action.tool, input: step.action.params },
          ],
        });
        expect(b.messages[2 + 2 * j]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `call_${j}`, content: step.observation }] });
      }
    });
    expect(agent.usage).toMatchObject({ steps: t.steps.length, requests: t.steps.length, promptTokens: 40 * t.steps.length, completionTokens: 7 * t.steps.length });
  });

  it('a reply without a tool call is an invalid-call step; the model gets the error and the episode goes on', async () => {
    const box: { oracle?: ExpertOracle } = {};
    api = await LoopbackApi.start(async (_r, i) => (i === 0 ? { body: anthropicText('The answer is probably 42.') } : { body: toolUse(await (box.oracle as ExpertOracle).next(), i) }));
    const agent = policy(api.url);
    const oracle = (box.oracle = new ExpertOracle(agent));
    const t = await runEpisode(make(ENV), oracle, { envId: ENV, seed: SEED });
    expect(t.steps[0]?.action.tool).toBe(INVALID_TOOL_CALL);
    expect(t.steps[0]?.error?.code).toBe('unknown_tool');
    expect(t.steps[0]?.thought).toBe('The answer is probably 42.');
    expect(t.outcome.score).toBe(1);
    const second = body(api.requests[1] as RecordedRequest);
    expect(second.messages[1]).toEqual({ role: 'assistant', content: 'The answer is probably 42.' });
    expect(second.messages[2]?.role).toBe('user');
    expect(second.messages[2]?.content).toMatch(/^Error: your tool call could not be parsed: no tool call found/);
    expect(second.messages).toHaveLength(3);
  });

  it('retries 429 and 529, then succeeds', async () => {
    const replies = [
      { status: 429, body: anthropicError('rate_limit_error', 'slow') },
      { status: 529, body: anthropicError('overloaded_error', 'busy') },
    ];
    api = await LoopbackApi.start((_r, i) => replies[i] ?? { body: toolUse({ tool: 'submit', params: { answer: '1' } }, i) });
    const agent = policy(api.url);
    const t = await runEpisode(make(ENV), agent, { envId: ENV, seed: SEED });
    expect(t.steps).toHaveLength(1);
    expect(agent.usage).toMatchObject({ requests: 3, retries: 2 });
  });

  it('anthropic:MODEL needs ANTHROPIC_API_KEY and passes it explicitly', async () => {
    expect(() => resolveAgent('anthropic:claude-x', ENV, { env: {} })).toThrow(ConfigError);
    expect(() => resolveAgent('anthropic:claude-x', ENV, { env: {} })).toThrow(/set ANTHROPIC_API_KEY/);
    expect(() => resolveAgent('anthropic:', ENV, { env: { ANTHROPIC_API_KEY: 'k' } })).toThrow(/names no model/);
    api = await LoopbackApi.start((_r, i) => ({ body: toolUse({ tool: 'submit', params: { answer: 'x' } }, i) }));
    const agent = resolveAgent('anthropic:claude-x', ENV, { env: { ANTHROPIC_API_KEY: 'key-from-env' }, anthropic: { baseURL: api.url } });
    await runEpisode(make(ENV), agent, { envId: ENV, seed: SEED });
    const headers = api.requests[0]?.headers;
    expect(JSON.stringify(headers)).toContain('key-from-env');
    expect(body(api.requests[0] as RecordedRequest).model).toBe('claude-x');
  });
});
