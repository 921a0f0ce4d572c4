import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, EpisodeEndedError } from '../../core/errors.js';
import { make } from '../../core/registry.js';
import { lastOf, playEpisode, replayActions } from '../../core/__fixtures__/play-episode.js';
import { type Action, isDone, type TaskInfo } from '../../core/types.js';
import { anthropicError, anthropicText, LoopbackApi, openaiCompletion } from '../../reward/judge/__fixtures__/loopback-api.js';
import { modelUserPrompt } from '../conversation-kit/model-user.js';
import { ScriptedUser } from '../conversation-kit/scripted-user.js';
import { STOP_TOKEN } from '../conversation-kit/user.js';
import { registerBuiltinEnvs } from '../register.js';
import { ENGINEERING_ENV_ID, EngineeringEnv, PING_EVERY } from './env.js';
import { EngineeringExpert } from './expert.js';
import { type EngineeringTask, listEngineeringTasks } from './tasks.js';

beforeAll(() => registerBuiltinEnvs());

/** The expert's calls on a task (they do not depend on the commander's phrasing, so on the seed). */
async function expertActions(task: EngineeringTask): Promise<Action[]> {
  const r = await playEpisode(new EngineeringEnv(), new EngineeringExpert(), task.id, 1);
  expect(r.success, task.id).toBe(true);
  return r.steps.map((s) => s.action);
}

const say = (content: string): Action => ({ tool: 'respond', params: { content } });
const isRemediation = (a: Action): boolean => ['rollback', 'restart', 'scale', 'edit_config'].includes(a.tool);

const tasks = listEngineeringTasks('train');
/** A bad deploy whose symptom is on a caller, with a service the fault does not reach. */
const deploy = tasks.find((t) => t.kind === 'bad_deploy' && t.incident.symptom !== t.incident.fault.service && t.incident.services.some((s) => t.incident.reach[s.name] === undefined)) as EngineeringTask;
const innocent = deploy.incident.services.find((s) => deploy.incident.reach[s.name] === undefined)?.name as string;

describe('EngineeringEnv', () => {
  it("opens with the commander's first message and the public task; the instruction states the runbook", async () => {
    const ts = await new EngineeringEnv().reset({ task: deploy.id, seed: 3 });
    expect(ts.observation).toBe(deploy.opening);
    expect(ts.info.task as TaskInfo).toMatchObject({ id: deploy.id, domain: 'engineering', split: 'train', instruction: deploy.instruction });
    expect(ts.info.user).toBe('scripted');
  });

  it('scores the expert 1 with every term true; the transcript holds the commander\'s turns', async () => {
    const steps = await replayActions(new EngineeringEnv(), deploy.id, await expertActions(deploy));
    expect(lastOf(steps)).toMatchObject({
      reward: 1,
      terminated: true,
      truncated: false,
      info: { success: true, score: 1, reason: 'resolved', terms: { healthy: true, root_cause: true, no_harm: true }, unhealthy: [], harmful: [], refusals: [] },
    });
    expect(lastOf(steps).info.fault).toEqual({ kind: 'bad_deploy', service: deploy.incident.fault.service });
    expect(steps.slice(1, -1).every((s) => s.reward === 0 && !isDone(s))).toBe(true);
    const transcript = lastOf(steps).info.transcript as string[];
    expect(transcript[0]).toBe(`user: ${deploy.opening}`);
    expect(transcript.filter((l) => l.startsWith('user: ')).length).toBe(4);
    expect(transcript.some((l) => /^user: (Yes, go ahead|Approved, go ahead|OK, do it)\./.test(l))).toBe(true);
  });

  it('fails each term alone: a harmful restart, a wrong root cause, no fix', async () => {
    const actions = await expertActions(deploy);
    const resolve = actions[actions.length - 1] as Action;
    const before = actions.slice(0, -1);

    // The right fix and root cause, plus an approved restart of a service the fault never reached.
    const harmful = [...before, say(`Shall I restart ${innocent} as well?`), { tool: 'restart', params: { service: innocent } }, resolve];
    const s1 = await replayActions(new EngineeringEnv(), deploy.id, harmful);
    expect(s1[s1.length - 2]?.observation).toMatch(new RegExp(`^Restarted all \\d+ replicas of ${innocent}`));
    expect(lastOf(s1)).toMatchObject({ reward: 0, info: { success: false, terms: { healthy: true, root_cause: true, no_harm: false }, harmful: [{ tool: 'restart', service: innocent, step: harmful.length - 1 }] } });

    // A healthy fleet, resolved with the victim the commander named as the cause.
    const victim = { ...resolve, params: { ...resolve.params, root_cause: `${deploy.incident.symptom}: bad_deploy` } };
    expect(lastOf(await replayActions(new EngineeringEnv(), deploy.id, [...before, victim]))).toMatchObject({ reward: 0, info: { terms: { healthy: true, root_cause: false, no_harm: true }, stated_root_cause: `${deploy.incident.symptom}: bad_deploy` } });
    // … or with the right service and the wrong kind.
    const kind = { ...resolve, params: { ...resolve.params, root_cause: `${deploy.incident.fault.service}: config_change` } };
    expect(lastOf(await replayActions(new EngineeringEnv(), deploy.id, [...before, kind]))).toMatchObject({ reward: 0, info: { terms: { healthy: true, root_cause: false, no_harm: true } } });

    // The right root cause without the rollback: the fleet is still degraded.
    const unfixed = actions.filter((a) => !isRemediation(a));
    const s3 = await replayActions(new EngineeringEnv(), deploy.id, unfixed);
    expect(lastOf(s3)).toMatchObject({ reward: 0, info: { terms: { healthy: false, root_cause: true, no_harm: true } } });
    expect(lastOf(s3).info.unhealthy).toContain(deploy.incident.fault.service);
  });

  it("refuses a change no approved request named, changing nothing", async () => {
    const actions = await expertActions(deploy);
    const fix = actions.findIndex(isRemediation);
    const unapproved = [...actions.slice(0, fix - 1), ...actions.slice(fix)];
    const steps = await replayActions(new EngineeringEnv(), deploy.id, unapproved);
    expect(steps[fix]).toMatchObject({ reward: 0, info: { error: { code: 'policy_violation' } } });
    expect(steps[fix]?.observation).toMatch(/^Refused by policy: the incident commander has not approved a change to /);
    expect(lastOf(steps)).toMatchObject({ reward: 0, info: { terms: { healthy: false, root_cause: true, no_harm: true }, refusals: [{ tool: 'rollback', service: deploy.incident.fault.service, step: fix }] } });
    // A yes to a request naming another service does not approve this one.
    const env = new EngineeringEnv();
    await env.reset({ task: deploy.id, seed: 1 });
    await env.step(say(`Shall I restart ${innocent}?`));
    expect((await env.step({ tool: 'restart', params: { service: deploy.incident.fault.service } })).info.error).toMatchObject({ code: 'policy_violation' });
    expect(env.state?.actionLog).toEqual([]);
  });

  it('ends with user_gave_up when the agent tells the commander nothing, and pings for an update after silent calls', async () => {
    const gaveUp = await replayActions(new EngineeringEnv(), deploy.id, [say('lorem'), say('ipsum'), say('dolor')]);
    expect(lastOf(gaveUp)).toMatchObject({ reward: 0, terminated: true, info: { reason: 'user_gave_up', terms: { root_cause: false } } });
    const env = new EngineeringEnv();
    await env.reset({ task: deploy.id, seed: 1 });
    const obs: string[] = [];
    for (let i = 0; i < PING_EVERY; i++) obs.push((await env.step({ tool: 'list_services', params: {} })).observation);
    expect(obs.slice(0, -1).every((o) => !o.includes('incident commander]'))).toBe(true);
    expect(obs[obs.length - 1]).toMatch(new RegExp(`\\n\\n\\[${deploy.commander}, incident commander\\] `));
    const end = await env.step({ tool: 'resolve', params: { root_cause: 'x', summary: 'y' } });
    expect((end.info.transcript as string[]).length).toBe(2);
  });

  it('answers invalid calls and fleet errors with info.error, changing nothing', async () => {
    const env = new EngineeringEnv();
    await env.reset({ task: deploy.id, seed: 2 });
    expect(await env.step({ tool: 'fly', params: {} })).toMatchObject({ reward: 0, terminated: false, info: { error: { code: 'unknown_tool' } } });
    expect(await env.step({ tool: 'read_logs', params: {} })).toMatchObject({ info: { error: { code: 'invalid_params' } } });
    expect(await env.step({ tool: 'read_logs', params: { service: 'mainframe' } })).toMatchObject({ info: { error: { code: 'unknown_service' } } });
    expect(await env.step({ tool: 'restart', params: { service: 'mainframe' } })).toMatchObject({ info: { error: { code: 'unknown_service' } } });
    expect((await env.step({ tool: 'think', params: { thought: 'hmm' } })).observation).toBe('Thought recorded.');
    expect(env.state).toMatchObject({ now: 0, fixedAt: undefined, actionLog: [] });
  });

  it("is deterministic for the same seed, across instances; the commander's phrasing follows the seed", async () => {
    const actions = [say('When did it start?'), { tool: 'list_services', params: {} }, { tool: 'read_logs', params: { service: deploy.incident.symptom } }, say('What are customers seeing?'), say('lorem')];
    const a = await replayActions(new EngineeringEnv(), deploy.id, actions, 11);
    expect(await replayActions(new EngineeringEnv(), deploy.id, actions, 11)).toEqual(a);
    const texts = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5, 6]) texts.add((await replayActions(new EngineeringEnv(), deploy.id, actions, seed)).map((s) => s.observation).join('\n'));
    expect(texts.size).toBeGreaterThan(1);
    const r1 = await new EngineeringEnv().reset({ seed: 5 });
    const r2 = await new EngineeringEnv().reset({ seed: 5 });
    expect((r1.info.task as TaskInfo).id).toBe((r2.info.task as TaskInfo).id);
  });

  it('validates its options and lists its tasks by split', () => {
    expect(() => new EngineeringEnv({ users: 'scripted' })).toThrow(ConfigError);
    expect(() => new EngineeringEnv({ user: 'gpt' })).toThrow(/unknown user 'gpt'/);
    expect(() => new EngineeringEnv({ user: 'openai:m' }, {})).toThrow(/OPENAI_API_KEY/);
    const env = new EngineeringEnv();
    expect(env.listTasks('train')).toHaveLength(250);
    expect(env.countTasks('heldout')).toBe(60);
    expect(make(ENGINEERING_ENV_ID).countTasks?.()).toBe(310);
    expect(env.tools.map((t) => `${t.name}:${t.category}`)).toEqual([
      'respond:communicate', 'list_services:read', 'read_logs:read', 'query_metrics:read', 'list_changes:read', 'read_config:read',
      'rollback:write', 'restart:write', 'scale:write', 'edit_config:write', 'think:think', 'resolve:submit',
    ]);
  });
});

describe('EngineeringEnv with a model as the commander (loopback OpenAI-compatible and Anthropic servers)', () => {
  let api: LoopbackApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('runs an episode end to end: the model plays the commander from the hidden instruction', async () => {
    // The server's "model" answers as the scripted commander of the same task would, so the expert can succeed.
    const commander = new ScriptedUser();
    commander.start({ instruction: deploy.hidden, opening: deploy.opening, script: deploy.script, seed: 9 });
    api = await LoopbackApi.start((req) => {
      const messages = (req.body as { messages: { role: string; content: string }[] }).messages;
      const turn = commander.answer((messages[messages.length - 1] as { content: string }).content);
      // Satisfied once told the fix is done, the model ends the conversation: the commander leaves, the episode goes on.
      return { body: openaiCompletion(turn.done || commander.currentGoal?.id === 'resolve' ? `${turn.text}\n${STOP_TOKEN}` : turn.text) };
    });
    const env = make(ENGINEERING_ENV_ID, { kwargs: { user: `openai:commander-sim@${api.url}/v1`, userApiKey: 'EMPTY' } });
    const { timeSteps, steps, last: ts } = await playEpisode(env, new EngineeringExpert(), deploy.id, 4);
    expect(timeSteps[0]?.info.user).toBe('openai:commander-sim');
    expect(ts).toMatchObject({ reward: 1, terminated: true, info: { reason: 'resolved', terms: { healthy: true, root_cause: true, no_harm: true } } });
    const left = steps[steps.length - 2];
    expect(left?.action.tool).toBe('respond');
    expect(left?.ts.observation).toMatch(/\n\n\(The incident commander has left the conversation\. /);
    expect(left?.ts.observation).not.toContain(STOP_TOKEN);
    const transcript = ts.info.transcript as string[];
    expect(transcript[0]).toBe(`user: ${deploy.opening}`);
    expect(transcript.filter((l) => l.startsWith('user: ')).length).toBe(transcript.filter((l) => l.startsWith('agent: ')).length + 1);
    expect(transcript.some((l) => l.startsWith('user: ') && /first alert|Alerts started/.test(l))).toBe(true);
    const first = api.requests[0]?.body as { messages: { role: string; content: string }[] };
    expect(first.messages[0]).toEqual({ role: 'system', content: modelUserPrompt(deploy.hidden) });
    expect(api.requests).toHaveLength(transcript.filter((l) => l.startsWith('agent: ')).length);
    // After the commander left (here the finished commander stops at once), a message reaches no one, and the
    // episode still ends only with resolve.
    await env.reset({ task: deploy.id, seed: 4 });
    expect((await env.step(say('Hello again.'))).observation).toMatch(/\n\n\(The incident commander has left the conversation\. /);
    const requests = api.requests.length;
    const after = await env.step(say('Anything else?'));
    expect(after).toMatchObject({ terminated: false, truncated: false });
    expect(after.observation).toMatch(/^\(The incident commander has left the conversation\. /);
    expect(api.requests).toHaveLength(requests);
    expect(await env.step({ tool: 'resolve', params: { root_cause: `${deploy.incident.fault.service}: bad_deploy`, summary: 's' } })).toMatchObject({ terminated: true, info: { reason: 'resolved', terms: { healthy: false, root_cause: true } } });
    await env.close();
  });

  it('runs with the commander on the Anthropic Messages API too, and truncates when that server errors', async () => {
    const commander = new ScriptedUser();
    commander.start({ instruction: deploy.hidden, opening: deploy.opening, script: deploy.script, seed: 2 });
    const text = (content: unknown): string => (typeof content === 'string' ? content : (content as { text: string }[]).map((b) => b.text).join(''));
    api = await LoopbackApi.start((req) => {
      const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
      return { body: anthropicText(commander.answer(text(messages[messages.length - 1]?.content)).text) };
    });
    const env = make(ENGINEERING_ENV_ID, { kwargs: { user: `anthropic:claude-commander@${api.url}`, userApiKey: 'sk-test' } });
    const ts = (await playEpisode(env, new EngineeringExpert(), deploy.id, 2)).last;
    expect(ts).toMatchObject({ reward: 1, info: { reason: 'resolved' } });
    expect((api.requests[0]?.body as { system: unknown }).system).toEqual(modelUserPrompt(deploy.hidden));
    expect((ts.info.transcript as string[]).filter((l) => l.startsWith('user: '))).toHaveLength(4);
    await env.close();
    await api.close();

    api = await LoopbackApi.start(() => ({ status: 529, body: anthropicError('overloaded_error', 'busy') }));
    const failing = make(ENGINEERING_ENV_ID, { kwargs: { user: `anthropic:claude-commander@${api.url}`, userApiKey: 'sk-test', userMaxRetries: 0 } });
    await failing.reset({ task: deploy.id, seed: 2 });
    const failed = await failing.step(say('Hi, I am on it. When did the first alert fire?'));
    expect(failed).toMatchObject({ reward: 0, terminated: false, truncated: true, info: { reason: 'user_error' } });
    expect(failed.info.user_error).toMatch(/busy/);
    await failing.close();
  });

  it('truncates with the reason when the commander server errors, or does not answer in time', async () => {
    api = await LoopbackApi.start((_r, i) => (i === 0 ? { status: 500, body: { error: { message: 'model crashed', type: 'server_error' } } } : { hang: true }));
    const env = make(ENGINEERING_ENV_ID, { kwargs: { user: `openai:commander-sim@${api.url}/v1`, userApiKey: 'EMPTY', userMaxRetries: 0, userTimeoutMs: 200 } });
    await env.reset({ task: deploy.id, seed: 1 });
    const failed = await env.step(say('Hi, I am on it. When did the first alert fire?'));
    expect(failed).toMatchObject({ reward: 0, terminated: false, truncated: true, info: { reason: 'user_error', success: false, score: 0 } });
    expect(failed.info.user_error).toMatch(/^user openai:commander-sim at http:\/\/127\.0\.0\.1:\d+\/v1: openai \(commander-sim\): HTTP 500 model crashed \(gave up after 1 attempts\)$/);
    await expect(env.step(say('Hello?'))).rejects.toThrow(EpisodeEndedError);
    await env.reset({ task: deploy.id, seed: 1 });
    const slow = await env.step(say('Hi, I am on it. When did the first alert fire?'));
    expect(slow).toMatchObject({ truncated: true, info: { reason: 'user_error' } });
    expect(slow.info.user_error).toMatch(/request timed out: no complete response within 200 ms/);
    await env.close();
  });
});
