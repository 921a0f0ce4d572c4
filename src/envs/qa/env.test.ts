import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../core/agent.js';
import { checkEnv } from '../../core/check-env.js';
import { ConfigError, SchemaError } from '../../core/errors.js';
import { make } from '../../core/registry.js';
import { runEpisode } from '../../core/rollout.js';
import type { Action, TaskInfo } from '../../core/types.js';
import { hleJudge } from '../../reward/judge/__fixtures__/hle-judge.js';
import { LoopbackApi, openaiError, type FakeHandler } from '../../reward/judge/__fixtures__/loopback-api.js';
import { registerBuiltinEnvs } from '../register.js';
import { QA_ENV_ID, QaEnv } from './env.js';

beforeAll(() => registerBuiltinEnvs());

const FIXTURES = join(import.meta.dirname, '__fixtures__');
const QUESTIONS = join(FIXTURES, 'questions.jsonl');
const TRAIN = join(FIXTURES, 'train.json');
const dir = mkdtempSync(join(tmpdir(), 'gymflow-qa-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let api: LoopbackApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const answer = (response: string): Action => ({ tool: 'answer', params: { response } });

/** An agent that answers every question with `response(task)`. */
function answering(response: (task: TaskInfo) => string): Agent {
  return { info: { name: 'answering' }, act: async ({ task }) => ({ action: answer(response(task)) }) };
}

describe('gymflow/qa-v0 with the rule check', () => {
  it('is made from its keyword arguments: the question set as the heldout split, the training set as train', async () => {
    const env = make(QA_ENV_ID, { kwargs: { questions: QUESTIONS, trainQuestions: TRAIN } });
    expect(env.domain).toBe('qa');
    expect(env.tools.map((t) => [t.name, t.category])).toEqual([
      ['think', 'think'],
      ['answer', 'submit'],
    ]);
    expect(env.listTasks?.('heldout').map((t) => t.id)).toEqual(['q-capital', 'q-prime', 'q-noble', 'q-derivative', 'q-planets']);
    expect(env.listTasks?.('train').map((t) => t.id)).toEqual(['t-boiling', 't-hexagon']);
    expect(env.countTasks?.()).toBe(7);
    expect(env.notes?.()).toEqual([`1 of the 6 questions of ${QUESTIONS} have an image and were left out (the policy declares no image input; set imageInput: true if it takes images)`]);
    const task = env.listTasks?.('heldout')[2] as TaskInfo;
    expect(task.instruction).toContain('Which of these elements is a noble gas?');
    expect(task.instruction).toContain('Answer: {your chosen answer}');
    expect(task.metadata).toEqual({ answerType: 'multipleChoice', category: 'Chemistry', rawSubject: 'Chemistry' });
    expect(JSON.stringify(env.listTasks?.())).not.toContain('Argon is in group 18');
    await env.close();
  });

  it('rewards the right answer with 1 and reports the stated confidence; thinking first is free', async () => {
    const env = make(QA_ENV_ID, { kwargs: { questions: QUESTIONS } });
    const first = await env.reset({ task: 'q-prime', seed: 0 });
    expect(first.observation).toContain('smallest prime number greater than 90');
    expect(first.observation).toContain('Exact Answer: {your succinct, final answer}');
    expect((await env.step({ tool: 'think', params: { thought: '91 = 7 x 13' } })).reward).toBe(0);
    const right = await env.step(answer('Explanation: 91, 93 and 95 are composite.\nExact Answer: 97\nConfidence: 80%'));
    expect(right).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { success: true, score: 1, reason: 'answered', confidence: 0.8, expected: '97' } });
    expect(right.observation).toBe('Correct. Answer read: "97"; stated confidence 80%.');
    await env.reset({ task: 'q-noble' });
    const wrong = await env.step(answer('Explanation: it is unreactive.\nAnswer: A\nConfidence: 60%'));
    expect(wrong).toMatchObject({ reward: 0, terminated: true, info: { success: false, score: 0, confidence: 0.6 } });
    await env.reset({ task: 'q-noble' });
    // No confidence stated: 100%, as HLE's judge is told.
    expect((await env.step(answer('Answer: B'))).info).toMatchObject({ success: true, confidence: 1 });
    await expect(env.reset({ task: 'q-unknown' })).rejects.toThrow(/gymflow\/qa-v0: no question with id "q-unknown"/);
    await env.close();
  });

  it('keeps the confidence in the trajectory outcome', async () => {
    const env = make(QA_ENV_ID, { kwargs: { questions: QUESTIONS } });
    const t = await runEpisode(env, answering(() => 'Exact Answer: Canberra\nConfidence: 55%'), { envId: QA_ENV_ID, task: 'q-capital', seed: 1 });
    expect(t.outcome).toEqual({ success: true, score: 1, terminated: true, truncated: false, reason: 'answered', confidence: 0.55 });
    await env.close();
  });

  it('passes checkEnv', async () => {
    const report = await checkEnv(() => make(QA_ENV_ID, { kwargs: { questions: QUESTIONS, trainQuestions: TRAIN } }), { seed: 3 });
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
  });

  it('asks the questions with an image when the policy takes images', async () => {
    const env = make(QA_ENV_ID, { kwargs: { questions: QUESTIONS, imageInput: true } });
    const figure = env.listTasks?.('heldout').find((t) => t.id === 'q-figure');
    expect(figure?.metadata?.['image']).toMatch(/^data:image\/png;base64,/);
    expect(figure?.instruction).toContain("This question has an image: the task metadata's `image`.");
    expect(env.notes?.()).toEqual([]);
    await env.close();
  });
});

describe('gymflow/qa-v0 graded by a judge (loopback server)', () => {
  async function judged(handler: FakeHandler, judge: (url: string) => unknown, env: Record<string, string | undefined> = {}): Promise<QaEnv> {
    api = await LoopbackApi.start(handler);
    return new QaEnv({ questions: QUESTIONS, judge: judge(api.url) }, env);
  }

  it("asks an OpenAI-compatible judge with HLE's prompt and rewards its verdict; records the rule check of exact answers", async () => {
    const env = await judged(hleJudge, (url) => `openai:judge-test@${url}`, { OPENAI_API_KEY: 'EMPTY' });
    expect(env.grading).toBe('judge:openai:judge-test');
    await env.reset({ task: 'q-capital' });
    const ts = await env.step(answer('Explanation: purpose-built.\nExact Answer: **Canberra**\nConfidence: 85%'));
    expect(ts).toMatchObject({ reward: 1, terminated: true, info: { success: true, confidence: 0.85, grading: { by: 'judge', correct: true, extracted: '**Canberra**', rule: { correct: true } } } });
    expect(ts.observation).toBe('Correct. Answer read: "**Canberra**"; stated confidence 85%. (rule check: matches the reference exactly)');
    const body = api!.requests[0]!.body as { model: string; messages: { role: string; content: string }[] };
    expect(body.model).toBe('judge-test');
    expect(body.messages[0]!.content).toContain('[question]: What is the capital city of Australia?');
    expect(body.messages[0]!.content).toContain('[correct_answer]: Canberra');
    await env.reset({ task: 'q-noble' });
    const mc = await env.step(answer('Explanation: unreactive.\nAnswer: C\nConfidence: 40%'));
    expect(mc).toMatchObject({ reward: 0, info: { success: false, confidence: 0.4, grading: { by: 'judge', correct: false } } });
    expect((mc.info['grading'] as Record<string, unknown>)['rule']).toBeUndefined();
    await env.close();
  });

  it('takes a judge configuration object (Anthropic here), its key given directly', async () => {
    const env = await judged(hleJudge, (url) => ({ provider: 'anthropic', model: 'claude-test', baseURL: url, apiKey: 'test-key' }));
    await env.reset({ task: 'q-derivative' });
    expect((await env.step(answer('Exact Answer: 12\nConfidence: 99%'))).info).toMatchObject({ success: true, confidence: 0.99 });
    expect(api!.to('/v1/messages')).toHaveLength(1);
    await env.close();
  });

  it('ends the episode truncated with reason judge_error when the judge gives no verdict', async () => {
    const env = await judged(() => ({ status: 500, body: openaiError('down', 'server_error') }), (url) => ({ provider: 'openai', model: 'm', baseURL: `${url}/v1`, apiKey: 'k', retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2 } }));
    await env.reset({ task: 'q-capital' });
    const ts = await env.step(answer('Exact Answer: Canberra'));
    expect(ts).toMatchObject({ reward: 0, terminated: false, truncated: true, info: { reason: 'judge_error', success: false, score: 0 } });
    expect(ts.observation).toMatch(/^Your response could not be graded: answer-judge:openai:m: /);
    expect(api!.requests).toHaveLength(2);
    await env.close();
  });
});

describe('gymflow/qa-v0 keyword arguments', () => {
  const bad = (kwargs: Record<string, unknown>, env: Record<string, string | undefined> = {}) => () => new QaEnv(kwargs, env);

  it('need a question set, and take no unknown key', () => {
    expect(() => make(QA_ENV_ID)).toThrow(/^gymflow\/qa-v0 kwargs \$\.questions: missing: the path of a question set in HLE's format/);
    expect(bad({ questions: QUESTIONS, judges: 'openai:x' })).toThrow(/^gymflow\/qa-v0 kwargs \$: Unrecognized key: "judges"/);
    expect(bad({ questions: join(dir, 'missing.jsonl') })).toThrow(ConfigError);
  });

  it('report a bad question file with its line and field', () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, '{"id": "x", "question": "Q?", "answer": "1", "answer_type": "exactMatch"}\n{"id": "y", "question": "Q?", "answer_type": "exactMatch"}\n');
    expect(bad({ questions: file })).toThrow(SchemaError);
    expect(bad({ questions: file })).toThrow(/bad\.jsonl:2 \$\.answer: missing/);
  });

  it('name a bad judge: its spec, its fields, its missing key', () => {
    expect(bad({ questions: QUESTIONS, judge: 'gpt-4o' })).toThrow(/^gymflow\/qa-v0 kwargs \$\.judge: judge spec 'gpt-4o': expected openai:MODEL\[@BASE_URL\] or anthropic:MODEL\[@BASE_URL\]/);
    expect(bad({ questions: QUESTIONS, judge: { provider: 'openai', model: 'm', cachePath: 'c.jsonl' } })).toThrow(/gymflow\/qa-v0 kwargs \$\.judge: Unrecognized key: "cachePath"/);
    expect(bad({ questions: QUESTIONS, judge: 'anthropic:claude-x' })).toThrow(/^gymflow\/qa-v0 kwargs \$\.judge: judge provider 'anthropic' needs an API key: set ANTHROPIC_API_KEY/);
    expect(() => new QaEnv({ questions: QUESTIONS, judge: 'anthropic:claude-x' }, { ANTHROPIC_API_KEY: 'k' })).not.toThrow();
  });

  it('refuse a question in both sets, and a set of only image questions without image input', () => {
    expect(bad({ questions: QUESTIONS, trainQuestions: QUESTIONS })).toThrow(/question id "q-capital" is in both question sets/);
    const images = join(dir, 'images.jsonl');
    writeFileSync(images, '{"id": "i", "question": "Q?", "answer": "1", "answer_type": "exactMatch", "image": "https://example.org/i.png"}\n');
    expect(bad({ questions: images })).toThrow(/no question to ask: every question of .*images\.jsonl has an image and imageInput is not set/);
  });
});
