/**
 * `gymflow/qa-v0` through the built CLI: listed by `gymflow envs`, evaluated by `gymflow eval` with a model policy
 * and HLE's judge — both played by one loopback OpenAI-compatible server — reporting accuracy with its interval,
 * the RMS calibration error and the questions left out; a bad question file fails before any episode, naming its
 * line and field.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { parseEvalResult } from '../src/eval/result.js';
import { fixtureResponse, hlePolicyAndJudge } from '../src/reward/judge/__fixtures__/hle-judge.js';
import { LoopbackApi } from '../src/reward/judge/__fixtures__/loopback-api.js';
import { gymflowAsync, gymflowSync } from './support/cli.js';

const QUESTIONS = path.join(PACKAGE_ROOT, 'src/envs/qa/__fixtures__/questions.jsonl');

describe('gymflow/qa-v0 in the CLI', { timeout: 120_000 }, () => {
  let dir = '';
  let api: LoopbackApi | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gymflow-qa-'));
    api = await LoopbackApi.start(hlePolicyAndJudge(fixtureResponse));
  });
  afterAll(async () => {
    await api?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is listed by `gymflow envs`, unavailable until it is given a question set', () => {
    const r = gymflowSync('envs', '--json');
    expect(r.status).toBe(0);
    const row = (JSON.parse(r.stdout) as { id: string; domain: string; maxSteps: number; unavailable?: string }[]).find((e) => e.id === 'gymflow/qa-v0');
    expect(row).toMatchObject({ domain: 'qa', maxSteps: 4 });
    expect(row?.unavailable).toMatch(/kwargs \$\.questions: missing: the path of a question set in HLE's format/);
  });

  it('`gymflow eval` grades with the judge and reports accuracy, its interval, the calibration error and the skipped questions', async () => {
    const url = api?.url as string;
    const out = path.join(dir, 'qa-eval.json');
    const kwargs = { questions: QUESTIONS, judge: `openai:hle-judge@${url}` };
    const r = await gymflowAsync(['eval', '--env', 'gymflow/qa-v0', '--env-kwargs', JSON.stringify(kwargs), '--agent', `openai:policy@${url}`, '-n', '5', '--concurrency', '2', '--out', out], {
      env: { OPENAI_API_KEY: 'EMPTY' },
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines).toContain('success 3/5, Wilson 95% [0.231, 0.882]');
    expect(lines).toContain('calibration: RMS calibration error 0.200 (20.0 as HLE reports it) over 5 stated confidences, one bin');
    expect(lines.some((l) => l.startsWith('note: 1 of the 6 questions of ') && l.includes('have an image and were left out'))).toBe(true);
    const result = parseEvalResult(JSON.parse(await readFile(out, 'utf8')), out);
    expect(result.calibration).toMatchObject({ n: 5, binSize: 100 });
    expect(result.episodes.map((e) => [e.taskId, e.success, e.confidence])).toEqual([
      ['q-capital', true, 0.9],
      ['q-prime', true, 0.8],
      ['q-noble', false, 0.7],
      ['q-derivative', false, 0.6],
      ['q-planets', true, 1],
    ]);
    // Five policy requests and five judge requests, the judge's with HLE's prompt.
    const judged = (api?.requests ?? []).filter((q) => (q.body as { response_format?: unknown }).response_format !== undefined);
    expect(judged).toHaveLength(5);
    expect(JSON.stringify(judged[0]?.body)).toContain('Judge whether the following [response] to [question] is correct');
  });

  it('names the line and field of a bad question file before any episode', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    await writeFile(bad, '{"id": "a", "question": "Q?", "answer": "1", "answer_type": "exactMatch"}\n{"id": "b", "question": "Q?", "answer": "2", "answer_type": "essay"}\n');
    const r = gymflowSync('eval', '--env', 'gymflow/qa-v0', '--env-kwargs', JSON.stringify({ questions: bad }), '--agent', 'random', '-n', '1');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`${bad}:2 $.answer_type: expected exactMatch or multipleChoice (HLE's answer types), got "essay"`);
  });
});
