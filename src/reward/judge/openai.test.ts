import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { LoopbackApi, openaiCompletion, openaiError, verdict, type FakeHandler } from './__fixtures__/loopback-api.js';
import { codingProfile, codingTrajectory } from './__fixtures__/trajectories.js';
import { createJudge, type JudgeConfigInput } from './config.js';
import { BUILTIN_JUDGE_RUBRICS } from '../rubrics.js';

// These tests drive the real `openai` client against a loopback server speaking POST /v1/chat/completions,
// as a local vLLM server would.

const RUBRICS = BUILTIN_JUDGE_RUBRICS;
const NAMES = RUBRICS.map((r) => r.name);
const profile = codingProfile();
let api: LoopbackApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function judgeWith(handler: FakeHandler, config: Partial<JudgeConfigInput> = {}) {
  api = await LoopbackApi.start(handler);
  return createJudge(
    { provider: 'openai', model: 'judge-test', baseURL: `${api.url}/v1`, apiKey: 'EMPTY', retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...config },
    { env: {} },
  );
}

type Body = {
  model: string;
  temperature?: number;
  max_completion_tokens: number;
  messages: { role: string; content: string }[];
  response_format: { type: string; json_schema?: { name: string; strict: boolean; schema: { required: string[]; additionalProperties: boolean } } };
};

describe('OpenAI-compatible judge', () => {
  it('asks for a strict json_schema and parses the content', async () => {
    const judge = await judgeWith(() => ({ body: openaiCompletion(JSON.stringify(verdict(NAMES, 0.25)), { prompt_tokens: 500, completion_tokens: 50 }) }), {
      prices: { inputPerMTok: 0.5, outputPerMTok: 1.5 },
    });
    const out = await judge.judge(codingTrajectory(2), profile, RUBRICS);
    expect(out.map((j) => [j.stepIndex, j.rubrics['parameterCorrectness']!.score])).toEqual([
      [0, 0.25],
      [1, 0.25],
    ]);
    const reqs = api!.to('/v1/chat/completions');
    expect(reqs).toHaveLength(2);
    expect(reqs[0]!.headers['authorization']).toBe('Bearer EMPTY');
    const body = reqs[0]!.body as Body;
    expect(body.model).toBe('judge-test');
    expect(body.temperature).toBe(0);
    expect(body.max_completion_tokens).toBe(1024);
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(body.messages[0]!.content).toContain('JSON');
    expect(body.response_format.type).toBe('json_schema');
    expect(body.response_format.json_schema).toMatchObject({ name: 'record_scores', strict: true, schema: { required: NAMES, additionalProperties: false } });
    // 2 × (500 in, 50 out): 1000 × $0.5/M + 100 × $1.5/M = $0.0005 + $0.00015.
    const u = judge.usage();
    expect(u).toMatchObject({ requests: 2, inputTokens: 1000, outputTokens: 100 });
    expect(u.costUsd).toBeCloseTo(0.00065, 12);
  });

  it('falls back to json_object when the server rejects json_schema, and stays there', async () => {
    const judge = await judgeWith((req) =>
      (req.body as Body).response_format.type === 'json_schema'
        ? { status: 400, body: openaiError("response_format 'json_schema' is not supported") }
        : { body: openaiCompletion(JSON.stringify(verdict(NAMES, 0.5))) },
    );
    const out = await judge.judge(codingTrajectory(3, 'fb'), profile, RUBRICS);
    expect(out).toHaveLength(3);
    const formats = api!.requests.map((r) => (r.body as Body).response_format.type);
    // The first step tried json_schema then json_object; the others went straight to json_object.
    // (Steps run concurrently, so a second step may also have tried json_schema before the switch.)
    expect(formats.filter((f) => f === 'json_object')).toHaveLength(3);
    expect(formats.filter((f) => f === 'json_schema').length).toBeGreaterThanOrEqual(1);
    const before = api!.requests.length;
    await judge.judge(codingTrajectory(2, 'fb2'), profile, RUBRICS);
    expect(api!.requests.slice(before).map((r) => (r.body as Body).response_format.type)).toEqual(['json_object', 'json_object']);
    expect(judge.usage().requests).toBe(api!.requests.length);
  });

  it('repairs prose that is not JSON, sending the error back', async () => {
    const judge = await judgeWith((_req, i) => ({ body: openaiCompletion(i === 0 ? 'Sure! Here are the scores: {goalProgress: good}' : '```json\n' + JSON.stringify(verdict(NAMES, 0.8)) + '\n```') }));
    const out = await judge.judge(codingTrajectory(1), profile, RUBRICS);
    expect(out[0]!.rubrics['goalProgress']).toEqual({ score: 0.8, rationale: 'goalProgress looks fine' });
    const second = api!.requests[1]!.body as Body;
    expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(second.messages[2]!.content).toBe('Sure! Here are the scores: {goalProgress: good}');
    expect(second.messages[3]!.content).toMatch(/^Your verdict was invalid: the reply is not valid JSON \(.+\)\. Reply again with only the corrected JSON object/);
    expect(judge.usage()).toMatchObject({ requests: 2, repairs: 1, failures: 0 });
  });

  it('reads a verdict delivered as a tool call', async () => {
    const judge = await judgeWith(() => ({ body: openaiCompletion(null, undefined, JSON.stringify(verdict(NAMES, 0.3))) }));
    const out = await judge.judge(codingTrajectory(1), profile, RUBRICS);
    expect(out[0]!.rubrics['toolSelection']!.score).toBe(0.3);
  });

  it('retries 503 and 429 then succeeds; sends no temperature when configured null', async () => {
    const judge = await judgeWith(
      (_req, i) =>
        i === 0
          ? { status: 503, body: openaiError('loading model', 'server_error') }
          : i === 1
            ? { status: 429, headers: { 'retry-after': '0' }, body: openaiError('rate limited', 'rate_limit_error') }
            : { body: openaiCompletion(JSON.stringify(verdict(NAMES, 1))) },
      { temperature: null },
    );
    const out = await judge.judge(codingTrajectory(1), profile, RUBRICS);
    expect(out).toHaveLength(1);
    expect(judge.usage()).toMatchObject({ requests: 3, retries: 2 });
    expect(api!.requests[2]!.body).not.toHaveProperty('temperature');
  });

  it('refuses to start without an API key, naming the env var', () => {
    expect(() => createJudge({ provider: 'openai', model: 'm' }, { env: {} })).toThrow(ConfigError);
    expect(() => createJudge({ provider: 'openai', model: 'm' }, { env: {} })).toThrow(/set OPENAI_API_KEY or pass apiKey.*OPENAI_API_KEY=EMPTY/);
    expect(() => createJudge({ provider: 'openai', model: 'm', baseURL: 'http://127.0.0.1:1/v1' }, { env: { OPENAI_API_KEY: 'EMPTY' } })).not.toThrow();
  });

  it('validates the configuration with paths', () => {
    expect(() => createJudge({ provider: 'openai', model: 'm', apiKey: 'k', concurrency: 0 }, { env: {} })).toThrow(/\$\.concurrency/);
    expect(() => createJudge({ provider: 'gemini' as 'openai', model: 'm', apiKey: 'k' }, { env: {} })).toThrow(/\$\.provider/);
  });
});
