import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { anthropicError, anthropicText, LoopbackApi, openaiCompletion, openaiError, type RecordedRequest } from '../../reward/judge/__fixtures__/loopback-api.js';
import { AGENT_GREETING, ModelUser, modelUserPrompt } from './model-user.js';
import { DEFAULT_PHRASES } from './scripted-user.js';
import { createUser } from './user-spec.js';
import { STOP_TOKEN, type UserEpisode, UserSimulatorError } from './user.js';

// The real `openai` and `@anthropic-ai/sdk` clients against a loopback server (the judge's and the policies'
// test server), as a local vLLM or the Anthropic API would answer.

let api: LoopbackApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const EPISODE: UserEpisode = {
  instruction: 'You are Ada (zip 12345). You want to cancel order #W1 because it is no longer needed.',
  opening: 'Hi! I want to cancel an order.',
  script: { facts: [], goals: [], patience: 1, phrases: DEFAULT_PHRASES },
  seed: 7,
};
const FAST = { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2 };

interface OpenAIBody {
  model: string;
  seed: number;
  temperature: number;
  messages: { role: string; content: string }[];
}

describe('ModelUser (OpenAI-compatible server)', () => {
  it('sends the hidden instruction in the system prompt, the agent as the user side, and ends on ###STOP###', async () => {
    const replies = ['My email is ada@example.com.', `Thanks! ${STOP_TOKEN}`];
    api = await LoopbackApi.start((_r, i) => ({ body: openaiCompletion(replies[i] ?? '') }));
    const user = new ModelUser({ provider: 'openai', model: 'user-test', apiKey: 'EMPTY', baseURL: `${api.url}/v1`, retry: FAST });
    user.start(EPISODE);
    expect(await user.reply('Could you tell me your email?')).toEqual({ text: 'My email is ada@example.com.', done: false });
    expect(await user.reply('Done: order #W1 is cancelled.')).toEqual({ text: 'Thanks!', done: true, end: 'stop' });
    const bodies = api.to('/v1/chat/completions').map((r: RecordedRequest) => r.body as OpenAIBody);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toMatchObject({ model: 'user-test', seed: 7, temperature: 0 });
    expect(bodies[1]?.messages).toEqual([
      { role: 'system', content: modelUserPrompt(EPISODE.instruction) },
      { role: 'user', content: AGENT_GREETING },
      { role: 'assistant', content: EPISODE.opening },
      { role: 'user', content: 'Could you tell me your email?' },
      { role: 'assistant', content: 'My email is ada@example.com.' },
      { role: 'user', content: 'Done: order #W1 is cancelled.' },
    ]);
    expect(modelUserPrompt('X')).toContain('Instruction: X');
    expect(modelUserPrompt('X')).toContain(`generate '${STOP_TOKEN}'`);
  });

  it('retries a 503, then fails with a UserSimulatorError naming the server once retries are spent', async () => {
    api = await LoopbackApi.start((_r, i) => (i === 0 ? { status: 503, body: openaiError('loading', 'server_error') } : { body: openaiCompletion('Yes.') }));
    const user = new ModelUser({ provider: 'openai', model: 'user-test', apiKey: 'EMPTY', baseURL: `${api.url}/v1`, retry: FAST });
    user.start(EPISODE);
    expect((await user.reply('Shall I?')).text).toBe('Yes.');
    await api.close();
    api = await LoopbackApi.start(() => ({ status: 500, body: openaiError('boom', 'server_error') }));
    const failing = new ModelUser({ provider: 'openai', model: 'user-test', apiKey: 'EMPTY', baseURL: `${api.url}/v1`, retry: FAST });
    failing.start(EPISODE);
    const err = await failing.reply('Hello?').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserSimulatorError);
    expect((err as Error).message).toMatch(/^user openai:user-test at http:\/\/127\.0\.0\.1:\d+\/v1: openai \(user-test\): HTTP 500 boom \(gave up after 3 attempts\)$/);
    expect(api.requests).toHaveLength(3);
  });

  it('times out a server that never answers, and refuses an empty reply', async () => {
    api = await LoopbackApi.start((_r, i) => (i < 2 ? { hang: true } : { body: openaiCompletion('') }));
    const user = new ModelUser({ provider: 'openai', model: 'user-test', apiKey: 'EMPTY', baseURL: `${api.url}/v1`, timeoutMs: 150, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    user.start(EPISODE);
    await expect(user.reply('Hello?')).rejects.toThrow(/request timed out.*gave up after 2 attempts/);
    await expect(user.reply('Hello?')).rejects.toThrow(/the model's reply is empty/);
  });
});

describe('ModelUser (Anthropic Messages API)', () => {
  it('sends the prompt as system, alternating user/assistant turns, and ends on ###STOP###', async () => {
    api = await LoopbackApi.start((_r, i) => (i === 0 ? { status: 529, body: anthropicError('overloaded_error', 'busy') } : { body: anthropicText(`${STOP_TOKEN}`) }));
    const user = new ModelUser({ provider: 'anthropic', model: 'claude-test', apiKey: 'sk-test', baseURL: api.url, retry: FAST });
    user.start(EPISODE);
    expect(await user.reply('Done.')).toEqual({ text: '', done: true, end: 'stop' });
    const body = api.to('/v1/messages')[1]?.body as { system: string; messages: { role: string; content: string }[]; max_tokens: number };
    expect(body.system).toBe(modelUserPrompt(EPISODE.instruction));
    expect(body.max_tokens).toBe(512);
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });
});

describe('createUser', () => {
  it('builds the user a spec names, reading keys from the environment', () => {
    expect(createUser({ user: 'scripted' }).kind).toBe('scripted');
    expect(createUser({ user: 'openai:gpt-4o@http://127.0.0.1:1' }, { OPENAI_API_KEY: 'EMPTY' }).kind).toBe('openai:gpt-4o');
    expect(createUser({ user: 'anthropic:claude-x', userApiKey: 'k' }, {}).kind).toBe('anthropic:claude-x');
  });

  it('refuses an unknown spec, a missing key and a bad URL with a ConfigError saying what to do', () => {
    expect(() => createUser({ user: 'llama' })).toThrow(ConfigError);
    expect(() => createUser({ user: 'llama' })).toThrow(/unknown user 'llama': expected one of scripted, openai:MODEL\[@BASE_URL\], anthropic:MODEL\[@BASE_URL\]/);
    expect(() => createUser({ user: 'openai:gpt-4o' }, {})).toThrow(/needs an API key: set OPENAI_API_KEY/);
    expect(() => createUser({ user: 'anthropic:claude-x' }, {})).toThrow(/set ANTHROPIC_API_KEY/);
    expect(() => createUser({ user: 'openai:@http://h' }, { OPENAI_API_KEY: 'x' })).toThrow(/user spec 'openai:@http:\/\/h' names no model/);
    expect(() => createUser({ user: 'anthropic:c@http://' }, { ANTHROPIC_API_KEY: 'x' })).toThrow(/not a valid URL/);
  });
});
