import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { anthropicError, anthropicText, anthropicToolUse, LoopbackApi, verdict, type FakeHandler } from './__fixtures__/loopback-api.js';
import { codingProfile, codingTrajectory } from './__fixtures__/trajectories.js';
import { createJudge, type JudgeConfigInput } from './config.js';
import { JudgeError } from './errors.js';
import { BUILTIN_JUDGE_RUBRICS } from '../rubrics.js';

// These tests drive the real @anthropic-ai/sdk client against a loopback server speaking POST /v1/messages.

const RUBRICS = BUILTIN_JUDGE_RUBRICS;
const NAMES = RUBRICS.map((r) => r.name);
const profile = codingProfile();
const dir = mkdtempSync(join(tmpdir(), 'gymflow-judge-anthropic-'));
let api: LoopbackApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function judgeWith(handler: FakeHandler, config: Partial<JudgeConfigInput> = {}) {
  api = await LoopbackApi.start(handler);
  return createJudge(
    { provider: 'anthropic', model: 'claude-test', baseURL: api.url, apiKey: 'test-key', retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...config },
    { env: {} },
  );
}

type Body = { model: string; system: string; max_tokens: number; messages: { role: string; content: unknown }[]; tools: { name: string; input_schema: { required: string[] } }[]; tool_choice: unknown };

describe('Anthropic judge', () => {
  it('sends one forced tool call per step and parses the verdicts', async () => {
    const judge = await judgeWith(() => ({ body: anthropicToolUse(verdict(NAMES, 0.75)) }));
    const t = codingTrajectory(3);
    const out = await judge.judge(t, profile, RUBRICS);
    expect(out.map((j) => j.stepIndex)).toEqual([0, 1, 2]);
    expect(out[0]!.rubrics).toEqual({
      goalProgress: { score: 0.75, rationale: 'goalProgress looks fine' },
      toolSelection: { score: 0.75, rationale: 'toolSelection looks fine' },
      parameterCorrectness: { score: 0.75, rationale: 'parameterCorrectness looks fine' },
    });
    const reqs = api!.to('/v1/messages');
    expect(reqs).toHaveLength(3);
    const first = reqs[0]!;
    expect(first.method).toBe('POST');
    // SDK 1.x sends the API key as a bearer token (0.x used `x-api-key`).
    expect(first.headers['authorization']).toBe('Bearer test-key');
    expect(first.headers['anthropic-version']).toBeDefined();
    const body = first.body as Body;
    expect(body.model).toBe('claude-test');
    expect(body.max_tokens).toBe(1024);
    expect(body).not.toHaveProperty('temperature');
    expect(body.tools[0]!.name).toBe('record_scores');
    expect(body.tools[0]!.input_schema.required).toEqual(NAMES);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'record_scores' });
    expect(body.system).toContain('goalProgress');
    expect(body.messages).toHaveLength(1);
    // Each request judges its own step and never shows later ones.
    const userTexts = reqs.map((r) => (r.body as Body).messages[0]!.content as string);
    expect(userTexts.some((u) => u.includes('# CURRENT STEP (step 1)') && u.includes('## Step 0') && !u.includes('## Step 2'))).toBe(true);
    expect(judge.usage()).toMatchObject({ requests: 3, cacheHits: 0, inputTokens: 300, outputTokens: 60, costUsd: 0, failures: 0, retries: 0, repairs: 0 });
  });

  it('repairs an invalid verdict once, answering the tool_use with the validation error', async () => {
    const judge = await judgeWith((_req, i) => ({ body: anthropicToolUse(i === 0 ? { ...verdict(NAMES, 0.5), goalProgress: { rationale: 'x', score: 1.5 } } : verdict(NAMES, 0.5)) }));
    const out = await judge.judge(codingTrajectory(1), profile, RUBRICS);
    expect(out).toHaveLength(1);
    expect(out[0]!.rubrics['goalProgress']!.score).toBe(0.5);
    const second = api!.requests[1]!.body as Body;
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(second.messages[1]!.content).toEqual([{ type: 'tool_use', id: 'toolu_test', name: 'record_scores', input: { ...verdict(NAMES, 0.5), goalProgress: { rationale: 'x', score: 1.5 } } }]);
    const feedback = second.messages[2]!.content as { type: string; tool_use_id?: string; is_error?: boolean; content?: string }[];
    expect(feedback[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_test', is_error: true });
    expect(feedback[0]!.content).toContain('$.goalProgress.score: Too big: expected number to be <=1');
    expect(judge.usage()).toMatchObject({ requests: 2, repairs: 1, failures: 0 });
  });

  it('repairs a text reply (no tool call) with a plain text turn', async () => {
    const judge = await judgeWith((_req, i) => ({ body: i === 0 ? anthropicText('I think it is good.') : anthropicToolUse(verdict(NAMES, 1)) }));
    const out = await judge.judge(codingTrajectory(1), profile, RUBRICS);
    expect(out[0]!.rubrics['toolSelection']!.score).toBe(1);
    const second = api!.requests[1]!.body as Body;
    expect(second.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'I think it is good.' }] });
    expect(second.messages[2]!.content).toMatch(/not valid JSON/);
  });

  it('skips a step still invalid after the repair, or throws with onInvalid: throw', async () => {
    const bad = () => ({ body: anthropicToolUse({ goalProgress: { rationale: 'x', score: 0.5 } }) });
    const judge = await judgeWith(bad);
    expect(await judge.judge(codingTrajectory(1), profile, RUBRICS)).toEqual([]);
    expect(judge.usage()).toMatchObject({ requests: 2, repairs: 1, failures: 1 });
    await api!.close();
    const strict = await judgeWith(bad, { onInvalid: 'throw' });
    await expect(strict.judge(codingTrajectory(1), profile, RUBRICS)).rejects.toThrow(/invalid verdict after one repair: \$\.toolSelection: /);
  });

  it('caches verdicts in memory and on disk: re-scoring sends no requests', async () => {
    const cachePath = join(dir, 'cache.jsonl');
    const judge = await judgeWith(() => ({ body: anthropicToolUse(verdict(NAMES, 0.6)) }), { cachePath });
    const t = codingTrajectory(3, 'cache');
    const first = await judge.judge(t, profile, RUBRICS);
    expect(api!.requests).toHaveLength(3);
    const again = await judge.judge(t, profile, RUBRICS);
    expect(again).toEqual(first);
    expect(api!.requests).toHaveLength(3);
    expect(judge.usage()).toMatchObject({ requests: 3, cacheHits: 3 });
    expect(readFileSync(cachePath, 'utf8').trim().split('\n')).toHaveLength(3);

    // A new judge (another run) reads the file: zero requests.
    const fresh = createJudge({ provider: 'anthropic', model: 'claude-test', baseURL: api!.url, apiKey: 'k', cachePath }, { env: {} });
    expect(await fresh.judge(t, profile, RUBRICS)).toEqual(first);
    expect(fresh.usage()).toMatchObject({ requests: 0, cacheHits: 3, inputTokens: 0, costUsd: 0 });
    expect(api!.requests).toHaveLength(3);

    // Another rubric set or another model is another key.
    await fresh.judge(t, profile, RUBRICS.slice(0, 1));
    expect(api!.requests).toHaveLength(6);
    const otherModel = createJudge({ provider: 'anthropic', model: 'claude-other', baseURL: api!.url, apiKey: 'k', cachePath }, { env: {} });
    await otherModel.judge(t, profile, RUBRICS);
    expect(api!.requests).toHaveLength(9);
  });

  it('accounts tokens and cost from the response usage and the configured prices', async () => {
    const judge = await judgeWith(() => ({ body: anthropicToolUse(verdict(NAMES, 0.5), { input_tokens: 1000, output_tokens: 200 }) }), {
      prices: { inputPerMTok: 3, outputPerMTok: 15 },
    });
    await judge.judge(codingTrajectory(3, 'cost'), profile, RUBRICS);
    // 3 requests × (1000 in, 200 out) = 3000 in, 600 out; 3000 × $3/M + 600 × $15/M = $0.009 + $0.009.
    const u = judge.usage();
    expect(u).toMatchObject({ requests: 3, inputTokens: 3000, outputTokens: 600 });
    expect(u.costUsd).toBeCloseTo(0.018, 12);
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const judge = await judgeWith(() => ({ body: anthropicToolUse(verdict(NAMES, 0.5)), delayMs: 30 }), { concurrency: 3 });
    await Promise.all([judge.judge(codingTrajectory(6, 'p'), profile, RUBRICS), judge.judge(codingTrajectory(6, 'q'), profile, RUBRICS)]);
    expect(api!.requests).toHaveLength(12);
    expect(api!.maxInFlight).toBe(3);
  });

  it('retries 429 and 5xx with backoff, then succeeds', async () => {
    const judge = await judgeWith((_req, i) =>
      i === 0
        ? { status: 429, headers: { 'retry-after-ms': '2' }, body: anthropicError('rate_limit_error', 'slow down') }
        : i === 1
          ? { status: 529, body: anthropicError('overloaded_error', 'overloaded') }
          : i === 2
            ? { status: 500, body: anthropicError('api_error', 'boom') }
            : { body: anthropicToolUse(verdict(NAMES, 0.9)) },
    );
    const out = await judge.judge(codingTrajectory(1), profile, RUBRICS);
    expect(out[0]!.rubrics['goalProgress']!.score).toBe(0.9);
    expect(judge.usage()).toMatchObject({ requests: 4, retries: 3, failures: 0, inputTokens: 100 });
  });

  it('gives up after maxRetries and does not retry a 400', async () => {
    const judge = await judgeWith(() => ({ status: 503, body: anthropicError('api_error', 'down') }), { retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2 } });
    const err = await judge.judge(codingTrajectory(1), profile, RUBRICS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JudgeError);
    expect((err as JudgeError).status).toBe(503);
    expect((err as JudgeError).message).toMatch(/gave up after 3 attempts/);
    expect(api!.requests).toHaveLength(3);
    await api!.close();

    const bad = await judgeWith(() => ({ status: 401, body: anthropicError('authentication_error', 'invalid x-api-key') }));
    await expect(bad.judge(codingTrajectory(1), profile, RUBRICS)).rejects.toThrow(/401.*check ANTHROPIC_API_KEY/);
    expect(api!.requests).toHaveLength(1);
  });

  it('times out a hanging request and retries it', async () => {
    const judge = await judgeWith((_req, i) => (i === 0 ? { hang: true } : { body: anthropicToolUse(verdict(NAMES, 0.4)) }), { timeoutMs: 150 });
    const out = await judge.judge(codingTrajectory(1), profile, RUBRICS);
    expect(out[0]!.rubrics['goalProgress']!.score).toBe(0.4);
    expect(judge.usage()).toMatchObject({ requests: 2, retries: 1 });
    await api!.close();

    const stuck = await judgeWith(() => ({ hang: true }), { timeoutMs: 100, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    await expect(stuck.judge(codingTrajectory(1), profile, RUBRICS)).rejects.toThrow(/anthropic: request timed out.* \(gave up after 2 attempts\)/);
    await api!.close();

    // The SDK's own timeout ends with the headers: a body that stops halfway must time out too.
    const stalled = await judgeWith((_req, i) => (i === 0 ? { stallBody: true, body: anthropicToolUse(verdict(NAMES, 0.4)) } : { body: anthropicToolUse(verdict(NAMES, 0.7)) }), { timeoutMs: 300 });
    expect((await stalled.judge(codingTrajectory(1), profile, RUBRICS))[0]!.rubrics['goalProgress']!.score).toBe(0.7);
    expect(stalled.usage()).toMatchObject({ requests: 2, retries: 1 });
  });

  it('refuses to start without an API key, naming the env var', () => {
    expect(() => createJudge({ provider: 'anthropic', model: 'claude-test' }, { env: {} })).toThrow(ConfigError);
    expect(() => createJudge({ provider: 'anthropic', model: 'claude-test' }, { env: {} })).toThrow(/set ANTHROPIC_API_KEY or pass apiKey/);
    expect(() => createJudge({ provider: 'anthropic', model: 'claude-test' }, { env: { ANTHROPIC_API_KEY: 'sk-test' } })).not.toThrow();
    expect(() => createJudge({ provider: 'anthropic', model: 'm', apiKeyEnv: 'MY_JUDGE_KEY' }, { env: {} })).toThrow(/set MY_JUDGE_KEY/);
  });
});
