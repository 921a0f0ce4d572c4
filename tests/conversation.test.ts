import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getProfile } from '../src/core/profiles/index.js';
import { parseTrajectory, type Trajectory } from '../src/core/trajectory.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { collect } from '../src/hub/collect.js';
import { resolveAgent } from '../src/policy/specs.js';
import { LoopbackApi, openaiCompletion, verdict } from '../src/reward/judge/__fixtures__/loopback-api.js';
import { createJudge } from '../src/reward/judge/config.js';
import { weightedJudgeRubrics } from '../src/reward/rubrics.js';
import { scoreFile } from '../src/reward/score-file.js';
import { STOP_TOKEN } from '../src/envs/conversation-kit/user.js';
import { gymflowAsync } from './support/cli.js';
import { calledTools, evaluateExpertAndRandom, exportSft, listedEnv, rewardTotals, runEpisodeCli, scoreWithRules, toolResults, useHeldoutEpisodes } from './support/env-episodes.js';

const ENV = 'gymflow/conversation-v0';


beforeAll(() => registerBuiltinEnvs());

describe('gymflow/conversation-v0 in the CLI, collect, export, eval and reward', { timeout: 120_000 }, () => {
  let api: LoopbackApi | undefined;
  const episodes = useHeldoutEpisodes(ENV, { expert: 6, random: 6 });
  afterAll(async () => api?.close());

  it('is listed by `gymflow envs` and runs in `gymflow run-episode` with the expert and the random agent', () => {
    expect(listedEnv(ENV)).toMatchObject({ agents: ['random', 'expert'], trainTasks: 450, heldoutTasks: 90 });
    expect(runEpisodeCli(ENV, 'expert')).toMatch(/^gymflow\/conversation-v0 task=retail-train-\d{5} agent=conversation-expert steps=\d+ success=true score=1 return=1 reason=(user_stop|transferred)\n/);
    expect(runEpisodeCli(ENV, 'random')).toMatch(/agent=random steps=\d+ success=false/);
  });

  it('collects expert conversations and exports them as SFT records whose tool results are the customer\'s replies', async () => {
    const { dir, expert } = episodes();
    expect(expert.every((t) => t.outcome.success && t.task.domain === 'conversation')).toBe(true);
    const rows = await exportSft(dir, expert);
    expect(rows).toHaveLength(6);
    for (const [i, row] of rows.entries()) {
      const t = expert[i] as Trajectory;
      expect(row).toMatchObject({ env_id: ENV, domain: 'conversation', task_id: t.task.id, success: true, num_steps: t.steps.length });
      expect(row.messages.find((m) => m.role === 'user')?.content).toMatch(/^# Retail customer service policy[\s\S]*# The customer's first message\n\nHi! /);
      const calls = calledTools(row);
      expect(calls).toEqual(t.steps.map((s) => s.action.tool));
      expect(calls[0]).toBe('respond');
      // The customer's replies come back as the results of respond.
      const replies = toolResults(row);
      expect(replies).toEqual(t.steps.slice(0, -1).map((s) => s.observation));
      expect(replies[0]).toMatch(/@example\.com|my zip code is \d{5}/);
    }
  });

  it('evaluates the expert and the random agent on held-out tasks', async () => {
    const { expert, random } = await evaluateExpertAndRandom(ENV, 18);
    expect(expert.every((x) => x.success)).toBe(true);
    expect(random.filter((x) => x.success).length).toBeLessThanOrEqual(1);
    expect(new Set(expert.map((x) => x.taskId)).size).toBe(18);
  });

  it('`gymflow reward score --domain conversation` scores every step with the rule layer; the expert ranks above random', async () => {
    const { dir, expert, random } = episodes();
    const out = await scoreWithRules(dir, [...expert, ...random], 'conversation');
    expect(out).toHaveLength(12);
    expect(Math.min(...rewardTotals(out, 'conversation-expert'))).toBeGreaterThan(Math.max(...rewardTotals(out, 'random')));
    // The rules judged the expert's steps on the profile's rubrics (its weights; no judge asked).
    const first = (out[0] as Trajectory).steps[0];
    expect(first?.action.tool).toBe('respond');
    expect(Object.keys(first?.reward?.rubrics ?? {})).toEqual(expect.arrayContaining(['redundancy', 'efficiency']));
  });

  it('adds the judge layer for the profile\'s judge rubrics (a loopback OpenAI-compatible judge)', async () => {
    const { dir, expert } = episodes();
    const asked: string[][] = [];
    api = await LoopbackApi.start((req) => {
      const names = (req.body as { response_format: { json_schema: { schema: { required: string[] } } } }).response_format.json_schema.schema.required;
      asked.push(names);
      return { body: openaiCompletion(JSON.stringify(verdict(names, 0.75))) };
    });
    const judge = createJudge({ provider: 'openai', model: 'judge-test', baseURL: `${api.url}/v1`, apiKey: 'EMPTY', retry: { baseDelayMs: 1, maxDelayMs: 5 } }, { env: {} });
    const input = path.join(dir, 'one.jsonl');
    await writeFile(input, `${JSON.stringify(expert[0])}\n`);
    const out = path.join(dir, 'judged.jsonl');
    expect(await scoreFile(input, out, { profile: getProfile('conversation'), judge })).toMatchObject({ scored: 1, skipped: 0 });
    const t = parseTrajectory(JSON.parse(await readFile(out, 'utf8')), 'judged.jsonl:1');
    expect(t.reward?.layers).toHaveProperty('judge');
    expect(new Set(asked.flat())).toEqual(new Set(['goalProgress', 'toolSelection', 'parameterCorrectness']));
    expect(t.steps.every((s) => s.reward?.rubrics['goalProgress']?.score === 0.75)).toBe(true);
  });
});

describe('gymflow/conversation-v0 with a model as the customer, chosen on the command line', { timeout: 120_000 }, () => {
  let api: LoopbackApi | undefined;
  afterAll(async () => api?.close());

  it('`--user openai:MODEL@URL` plays the customer in run-episode and eval; a bad --user or --env-kwargs is named', async () => {
    const prompts: string[] = [];
    api = await LoopbackApi.start((req) => {
      const messages = (req.body as { messages: { role: string; content: string }[] }).messages;
      prompts.push(messages[0]?.content ?? '');
      return { body: openaiCompletion(`Sorry, I have to go now. ${STOP_TOKEN}`) };
    });
    const user = `openai:customer-sim@${api.url}/v1`;
    const env = { OPENAI_API_KEY: 'EMPTY' };
    const run = await gymflowAsync(['run-episode', '--env', ENV, '--agent', 'expert', '--seed', '3', '--user', user, '--json'], { env });
    expect(run.stderr).toBe('');
    const t = parseTrajectory(JSON.parse(run.stdout), 'run-episode');
    // The expert's first message goes to the model, whose reply is the observation, and its stop ends the episode.
    expect(t.steps[0]?.action.tool).toBe('respond');
    expect(t.steps[0]?.observation).toContain('Sorry, I have to go now.');
    expect(t.outcome).toMatchObject({ success: false, reason: 'user_stop' });
    // tau-bench's user simulator prompt in the system message: the hidden instruction and how to end.
    expect(prompts[0]).toContain(`generate '${STOP_TOKEN}'`);

    const evaluated = await gymflowAsync(['eval', '--env', ENV, '--agent', 'expert', '-n', '2', '--user', user, '--json'], { env });
    expect(evaluated.status).toBe(0);
    expect(JSON.parse(evaluated.stdout)).toMatchObject({ envKwargs: { user }, n: 2, metrics: { success: { successes: 0 } } });

    const bad = await gymflowAsync(['eval', '--env', ENV, '--agent', 'expert', '-n', '1', '--user', 'bogus']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("--user bogus: unknown user 'bogus': expected one of scripted, openai:MODEL[@BASE_URL], anthropic:MODEL[@BASE_URL]");
    const unknown = await gymflowAsync(['collect', '--env', ENV, '--agent', 'expert', '-n', '1', '-o', '/tmp/never.jsonl', '--env-kwargs', '{"usr": "scripted"}']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/--env-kwargs '\{"usr":"scripted"\}': .*usr/);
    const noKey = await gymflowAsync(['run-episode', '--env', ENV, '--user', user], { env: { OPENAI_API_KEY: '' } });
    expect(noKey.stderr).toContain('needs an API key: set OPENAI_API_KEY');
  });
});

describe('the conversation family scored by the rule and judge layers of its domain profile', { timeout: 120_000 }, () => {
  let api: LoopbackApi | undefined;
  const asked = new Set<string>();
  afterAll(async () => api?.close());

  it.each([
    ['gymflow/engineering-v0', 'engineering'],
    ['gymflow/advisory-v0', 'advisory'],
    ['gymflow/discussion-v0', 'discussion'],
  ])('%s with the %s profile: rules on every step, the profile\'s judge rubrics asked of a loopback judge', async (envId, domain) => {
    api ??= await LoopbackApi.start((req) => {
      const names = (req.body as { response_format: { json_schema: { schema: { required: string[] } } } }).response_format.json_schema.schema.required;
      for (const n of names) asked.add(n);
      return { body: openaiCompletion(JSON.stringify(verdict(names, 0.5))) };
    });
    asked.clear();
    const dir = await mkdtemp(path.join(tmpdir(), `gymflow-${domain}-`));
    const [t] = (await collect({ resolveAgent, envId, agent: 'expert', n: 1, split: 'heldout', seed: 1 })).trajectories;
    expect(t?.outcome.success).toBe(true);
    const input = path.join(dir, 'one.jsonl');
    await writeFile(input, `${JSON.stringify(t)}\n`);
    const profile = getProfile(domain);
    const judge = createJudge({ provider: 'openai', model: 'judge-test', baseURL: `${api.url}/v1`, apiKey: 'EMPTY', retry: { baseDelayMs: 1, maxDelayMs: 5 } }, { env: {} });
    const out = path.join(dir, 'judged.jsonl');
    expect(await scoreFile(input, out, { profile, judge })).toMatchObject({ scored: 1, skipped: 0 });
    const scored = parseTrajectory(JSON.parse(await readFile(out, 'utf8')), `${domain}/judged.jsonl:1`);
    expect(scored.reward?.layers).toHaveProperty('rules');
    expect(scored.reward?.layers).toHaveProperty('judge');
    // Every judge rubric the profile weighs above 0 (built-in ones and its own, e.g. advisory's `grounding`) was asked.
    expect([...asked].sort()).toEqual(weightedJudgeRubrics(profile).map((r) => r.name).sort());
    expect(asked.size).toBeGreaterThan(0);
    expect(scored.steps.every((s) => Object.keys(s.reward?.rubrics ?? {}).length > 0)).toBe(true);
  });
});

