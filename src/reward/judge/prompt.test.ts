import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../core/trajectory.js';
import { codingProfile, codingTrajectory } from './__fixtures__/trajectories.js';
import { extractJson, judgeJsonSchema, parseVerdict } from './output.js';
import { buildStepPrompt, DEFAULT_PROMPT_LIMITS, judgeSystemPrompt, truncateMiddle } from './prompt.js';
import { BUILTIN_JUDGE_RUBRICS, weightedJudgeRubrics } from '../rubrics.js';
import { judgeRubrics, listRubrics } from './rubrics.js';

const profile = codingProfile();

describe('judge prompt', () => {
  it('shows the task, the tools, a bounded window of earlier steps and the current step, never later ones', () => {
    const t = codingTrajectory(8);
    const { system, user } = buildStepPrompt(t, 6, profile, BUILTIN_JUDGE_RUBRICS);
    expect(user).toContain('Make the failing test in tests/test_a.py pass.');
    expect(user).toContain('- submit (submit, ends the episode):');
    expect(user).toContain('# Earlier steps (the last 3 of 6; 3 older step(s) omitted)');
    expect(user).not.toContain('## Step 2');
    for (const i of [3, 4, 5]) expect(user).toContain(`## Step ${i}`);
    expect(user).toContain('# CURRENT STEP (step 6)\nThought: step 6 of a\nAction: file_read {"path":"src/a_6.py"}\nObservation: contents of src/a_6.py');
    expect(user).not.toContain('step 7 of a');
    for (const r of BUILTIN_JUDGE_RUBRICS) expect(system).toContain(`- ${r.name}: `);
    expect(system).toContain(`    1: ${BUILTIN_JUDGE_RUBRICS[0]!.scale!['1']!}`);
    const first = buildStepPrompt(t, 0, profile, BUILTIN_JUDGE_RUBRICS);
    expect(first.user).toContain('(none: this is the first step)');
  });

  it('truncates long fields, keeping head and tail', () => {
    const long = 'H'.repeat(3000) + 'TAIL-ERROR';
    const cut = truncateMiddle(long, 200);
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut.startsWith('HHH')).toBe(true);
    expect(cut.endsWith('TAIL-ERROR')).toBe(true);
    expect(cut).toMatch(/…\[\d+ chars omitted\]…/);
    expect(truncateMiddle('short', 200)).toBe('short');

    const t = makeTrajectory({
      task: { id: 'x', domain: 'coding', instruction: 'i' },
      envId: 'e',
      agent: { name: 'a' },
      steps: [0, 1].map((index) => ({
        index,
        action: { tool: 'shell', params: { command: 'cat big' } },
        observation: 'o'.repeat(10_000),
        error: index === 1 ? { code: 'TOOL_FAILED', message: 'exit 1' } : undefined,
        startedAt: '2026-01-01T00:00:00.000Z',
        durationMs: 1,
      })),
      outcome: { success: false, score: 0, terminated: false, truncated: true, reason: 'max steps' },
      metadata: {},
    });
    const { user } = buildStepPrompt(t, 1, profile, BUILTIN_JUDGE_RUBRICS);
    // One earlier observation (≤ 400 chars) plus the current one (≤ 2000 chars) plus the fixed parts.
    expect(user.length).toBeLessThan(DEFAULT_PROMPT_LIMITS.historyFieldChars + DEFAULT_PROMPT_LIMITS.stepFieldChars + 2500);
    expect(user).toContain('Error: TOOL_FAILED: exit 1');
  });

  it('asks for exactly the rubric keys', () => {
    const rubrics = BUILTIN_JUDGE_RUBRICS.slice(0, 2);
    expect(judgeSystemPrompt(rubrics)).toContain('{"goalProgress": {"rationale": "...", "score": <number 0..1>}, "toolSelection": {"rationale": "...", "score": <number 0..1>}}');
    expect(judgeJsonSchema(rubrics)).toMatchObject({ type: 'object', required: ['goalProgress', 'toolSelection'], additionalProperties: false });
  });
});

describe('verdict parsing', () => {
  const rubrics = BUILTIN_JUDGE_RUBRICS.slice(0, 1);

  it('extracts JSON from fences or surrounding prose', () => {
    expect(extractJson('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(extractJson('Here:\n```json\n{"a":2}\n```')).toEqual({ ok: true, value: { a: 2 } });
    expect(extractJson('The verdict is {"a":3}. Thanks')).toEqual({ ok: true, value: { a: 3 } });
    expect(extractJson('')).toEqual({ ok: false, error: 'the reply was empty' });
    expect(extractJson('nope')).toMatchObject({ ok: false });
  });

  it('validates scores and rubric keys, tolerating extra keys and a missing rationale', () => {
    expect(parseVerdict({ text: '{"goalProgress":{"score":0.5},"overall":{"score":9}}' }, rubrics)).toEqual({ ok: true, value: { goalProgress: { score: 0.5 } } });
    expect(parseVerdict({ value: { goalProgress: { score: -0.1, rationale: 'r' } }, text: '' }, rubrics)).toEqual({
      ok: false,
      error: '$.goalProgress.score: Too small: expected number to be >=0',
    });
    expect(parseVerdict({ text: '{}' }, rubrics)).toMatchObject({ ok: false, error: expect.stringContaining('$.goalProgress') as unknown });
    expect(parseVerdict({ text: '{"goalProgress":{"score":"high"}}' }, rubrics)).toMatchObject({ ok: false });
  });
});

describe('rubrics', () => {
  it('lists built-ins and profile rubrics, with profile wording replacing a built-in', () => {
    const custom = {
      ...profile,
      judgeRubrics: [
        { name: 'goalProgress', description: 'Coding-specific progress.' },
        { name: 'testDiscipline', description: 'Runs the tests before submitting.', scale: { '1': 'always', '0': 'never' } },
      ],
      rubricWeights: { ...profile.rubricWeights, goalProgress: 0, parameterCorrectness: 0, testDiscipline: 0.2, toolSelection: 0.1 },
    };
    expect(judgeRubrics(custom).map((r) => r.name)).toEqual(['goalProgress', 'toolSelection', 'parameterCorrectness', 'testDiscipline']);
    expect(judgeRubrics(custom)[0]!.description).toBe('Coding-specific progress.');
    expect(weightedJudgeRubrics(custom).map((r) => r.name)).toEqual(['toolSelection', 'testDiscipline']);
    expect(listRubrics(custom).map((r) => [r.name, r.source, r.weight])).toEqual([
      ['goalProgress', 'profile', 0],
      ['toolSelection', 'builtin', 0.1],
      ['parameterCorrectness', 'builtin', 0],
      ['testDiscipline', 'profile', 0.2],
    ]);
    // The built-in coding profile weights the built-in judge rubrics, so `--judge` has an effect there; a
    // judge is still never called unless one is configured.
    expect(weightedJudgeRubrics(profile).map((r) => r.name)).toEqual(['goalProgress', 'toolSelection', 'parameterCorrectness']);
  });
});
