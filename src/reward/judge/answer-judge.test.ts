import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, SchemaError } from '../../core/errors.js';
import { hleJudge } from './__fixtures__/hle-judge.js';
import { anthropicToolUse, LoopbackApi, openaiCompletion, openaiError, type FakeHandler } from './__fixtures__/loopback-api.js';
import { createAnswerJudge, HLE_JUDGE_PROMPT, hleJudgePrompt, parseAnswerJudgeConfig } from './answer-judge.js';
import { JudgeError } from './errors.js';

// The real `openai` and `@anthropic-ai/sdk` clients against a loopback server.

let api: LoopbackApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function judgeWith(handler: FakeHandler, provider: 'openai' | 'anthropic' = 'openai', extra: Record<string, unknown> = {}) {
  api = await LoopbackApi.start(handler);
  const baseURL = provider === 'openai' ? `${api.url}/v1` : api.url;
  return createAnswerJudge({ provider, model: 'judge-test', baseURL, apiKey: 'EMPTY', retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...extra }, { env: {} });
}

const QUESTION = 'What is the capital of Australia?';
const RIGHT = 'Explanation: it was purpose-built as the capital.\nExact Answer: Canberra\nConfidence: 85%';
const WRONG = 'Explanation: the largest city.\nExact Answer: Sydney\nConfidence: 60%';

type OpenAIBody = {
  max_completion_tokens: number;
  temperature?: number;
  messages: { role: string; content: string }[];
  response_format: { type: string; json_schema?: { name: string; strict: boolean; schema: { required: string[] } } };
};
type AnthropicBody = { system?: string; max_tokens: number; messages: { role: string; content: unknown }[]; tools: { name: string }[]; tool_choice: unknown };

describe('hleJudgePrompt', () => {
  it("is HLE's prompt, filled in once, as one user message", () => {
    const p = hleJudgePrompt('Is {response} a placeholder?', 'Exact Answer: yes', 'yes');
    expect(p.system).toBe('');
    expect(p.user.startsWith('Judge whether the following [response] to [question] is correct or not based on the precise and unambiguous [correct_answer] below.')).toBe(true);
    expect(p.user).toContain('[question]: Is {response} a placeholder?\n\n[response]: Exact Answer: yes\n\n');
    expect(p.user).toContain('[correct_answer]: yes\n\nreasoning:');
    expect(p.user.endsWith('Put 100 if there is no confidence score available.')).toBe(true);
    expect(HLE_JUDGE_PROMPT).toContain("confidence: The extracted confidence score between 0|\\%| and 100|\\%| from [response].");
  });
});

describe('AnswerJudge on an OpenAI-compatible server', () => {
  it("asks with HLE's structured output and reads extracted answer, reasoning, correct and confidence", async () => {
    const judge = await judgeWith(hleJudge);
    expect(await judge.grade({ question: QUESTION, response: RIGHT, correctAnswer: 'Canberra' })).toEqual({
      extractedFinalAnswer: 'Canberra',
      reasoning: 'Canberra is the correct answer.',
      correct: true,
      confidence: 85,
    });
    expect(await judge.grade({ question: QUESTION, response: WRONG, correctAnswer: 'Canberra' })).toMatchObject({ extractedFinalAnswer: 'Sydney', correct: false, confidence: 60 });
    const body = api!.requests[0]!.body as OpenAIBody;
    expect(body.messages).toEqual([{ role: 'user', content: hleJudgePrompt(QUESTION, RIGHT, 'Canberra').user }]);
    expect(body.max_completion_tokens).toBe(4096);
    expect(body.temperature).toBe(0);
    expect(body.response_format.json_schema).toMatchObject({
      name: 'extracted_answer',
      strict: true,
      schema: { required: ['extracted_final_answer', 'reasoning', 'correct', 'confidence'] },
    });
    expect(judge.usage()).toMatchObject({ requests: 2, failures: 0, repairs: 0 });
  });

  it('repairs an invalid verdict once, saying what was wrong', async () => {
    const judge = await judgeWith((_r, i) => ({
      body: openaiCompletion(JSON.stringify(i === 0 ? { extracted_final_answer: 'Canberra', reasoning: 'same', correct: 'maybe', confidence: 85 } : { extracted_final_answer: 'Canberra', reasoning: 'same', correct: 'yes', confidence: 85 })),
    }));
    expect((await judge.grade({ question: QUESTION, response: RIGHT, correctAnswer: 'Canberra' })).correct).toBe(true);
    const repair = api!.requests[1]!.body as OpenAIBody;
    expect(repair.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(repair.messages[2]!.content).toMatch(/^Your verdict was invalid: \$\.correct: .*Reply again with only the corrected JSON object: extracted_final_answer \(a string\), reasoning \(a string\), correct \('yes' or 'no'\)/);
    expect(judge.usage()).toMatchObject({ requests: 2, repairs: 1, failures: 0 });
  });

  it('fails with a JudgeError when the verdict stays invalid, or the server keeps failing; retries 5xx', async () => {
    const invalid = await judgeWith(() => ({ body: openaiCompletion('I think it is right.') }));
    await expect(invalid.grade({ question: QUESTION, response: RIGHT, correctAnswer: 'Canberra' })).rejects.toThrow(/invalid verdict after one repair: the reply is not valid JSON/);
    await api!.close();
    const flaky = await judgeWith((r, i) => (i < 2 ? { status: 503, body: openaiError('overloaded', 'server_error') } : hleJudge(r, i)));
    expect((await flaky.grade({ question: QUESTION, response: RIGHT, correctAnswer: 'Canberra' })).correct).toBe(true);
    expect(flaky.usage()).toMatchObject({ requests: 3, retries: 2 });
    await api!.close();
    const refused = await judgeWith(() => ({ status: 401, body: openaiError('bad key', 'authentication_error') }));
    const err = await refused.grade({ question: QUESTION, response: RIGHT, correctAnswer: 'Canberra' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JudgeError);
    expect((err as JudgeError).status).toBe(401);
    expect(api!.requests).toHaveLength(1);
  });
});

describe('AnswerJudge on the Anthropic API', () => {
  it('forces the extracted_answer tool, sends no system prompt and reads the tool input', async () => {
    const judge = await judgeWith(hleJudge, 'anthropic');
    expect(await judge.grade({ question: QUESTION, response: WRONG, correctAnswer: 'Canberra' })).toMatchObject({ extractedFinalAnswer: 'Sydney', correct: false, confidence: 60 });
    const body = api!.to('/v1/messages')[0]!.body as AnthropicBody;
    expect(body).not.toHaveProperty('system');
    expect(body.max_tokens).toBe(4096);
    expect(body.tools.map((t) => t.name)).toEqual(['extracted_answer']);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'extracted_answer' });
    expect(body.messages).toEqual([{ role: 'user', content: hleJudgePrompt(QUESTION, WRONG, 'Canberra').user }]);
  });

  it("ignores another tool's call and repairs", async () => {
    const judge = await judgeWith((r, i) => (i === 0 ? { body: anthropicToolUse({ correct: 'yes' }) } : hleJudge(r, i)), 'anthropic');
    expect((await judge.grade({ question: QUESTION, response: RIGHT, correctAnswer: 'Canberra' })).correct).toBe(true);
    expect(judge.usage()).toMatchObject({ requests: 2, repairs: 1 });
  });
});

describe('answer judge configuration', () => {
  it('takes the model fields of a judge configuration and refuses the rest, naming the place', () => {
    expect(parseAnswerJudgeConfig({ provider: 'openai', model: 'm' })).toMatchObject({ maxTokens: 4096, concurrency: 4, temperature: 0 });
    expect(() => parseAnswerJudgeConfig({ provider: 'openai', model: 'm', cachePath: 'x.jsonl' }, '--env-kwargs', ['judge'])).toThrow(SchemaError);
    expect(() => parseAnswerJudgeConfig({ provider: 'openai', model: 'm', cachePath: 'x.jsonl' }, '--env-kwargs', ['judge'])).toThrow(/--env-kwargs \$\.judge: Unrecognized key: "cachePath"/);
    expect(() => parseAnswerJudgeConfig({ provider: 'gemini', model: 'm' }, 'q.yaml', ['judge'])).toThrow(/q\.yaml \$\.judge\.provider: Invalid option/);
  });

  it('names the missing key variable and the place', () => {
    expect(() => createAnswerJudge({ provider: 'anthropic', model: 'm', apiKeyEnv: 'HLE_JUDGE_KEY' }, { env: {}, place: '--env-kwargs', at: ['judge'] })).toThrow(ConfigError);
    expect(() => createAnswerJudge({ provider: 'anthropic', model: 'm', apiKeyEnv: 'HLE_JUDGE_KEY' }, { env: {}, place: '--env-kwargs', at: ['judge'] })).toThrow(/^--env-kwargs \$\.judge: judge provider 'anthropic' needs an API key: set HLE_JUDGE_KEY/);
  });
});
