import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, EpisodeEndedError } from '../../core/errors.js';
import { make } from '../../core/registry.js';
import { lastOf, playEpisode, replayActions } from '../../core/__fixtures__/play-episode.js';
import { type Action, isDone, type TaskInfo, type TimeStep } from '../../core/types.js';
import { LoopbackApi, openaiCompletion } from '../../reward/judge/__fixtures__/loopback-api.js';
import { modelUserPrompt } from '../conversation-kit/model-user.js';
import { ScriptedUser } from '../conversation-kit/scripted-user.js';
import { STOP_TOKEN } from '../conversation-kit/user.js';
import { registerBuiltinEnvs } from '../register.js';
import type { User } from './database.js';
import { CONVERSATION_ENV_ID, RetailEnv } from './env.js';
import { RetailExpert } from './expert.js';
import { listRetailTasks, type RetailTask } from './tasks.js';

beforeAll(() => registerBuiltinEnvs());

/** The expert's calls on a task (they do not depend on the user's phrasing, so on the seed). */
async function expertActions(task: RetailTask): Promise<Action[]> {
  const r = await playEpisode(new RetailEnv(), new RetailExpert(), task.id, 1);
  expect(r.success, task.id).toBe(true);
  return r.steps.map((s) => s.action);
}

const say = (content: string): Action => ({ tool: 'respond', params: { content } });

/** Plays `actions`, then says goodbye until the user ends the conversation; returns every time step. */
async function play(env: RetailEnv, task: RetailTask, actions: readonly Action[], seed = 1): Promise<TimeStep[]> {
  const out = await replayActions(env, task.id, actions, seed);
  while (!isDone(lastOf(out))) out.push(await env.step(say('Goodbye.')));
  return out;
}

const isWrite = (a: Action): boolean => /^(cancel|modify|return|exchange)_/.test(a.tool);

const tasks = listRetailTasks('train');
/** A simple cancellation: one goal, the customer knows their email and the order id, no change of mind. */
const simple = tasks.find((t) => t.kind === 'cancel' && t.goals.length === 1 && t.knowsEmail && t.goals[0]?.knowsOrderId && !t.goals[0]?.initially) as RetailTask;
/** A change followed by a question whose answer the agent must tell. */
const compound = tasks.find((t) => t.gold.length === 1 && t.goals.length === 2 && t.goals[1]?.goal.kind === 'info' && t.knowsEmail) as RetailTask;

describe('RetailEnv', () => {
  it('opens with the customer\'s first message and the public task; the instruction states the policy', async () => {
    const ts = await new RetailEnv().reset({ task: simple.id, seed: 3 });
    expect(ts.observation).toBe(simple.opening);
    expect(ts.info.task as TaskInfo).toMatchObject({ id: simple.id, domain: 'conversation', split: 'train', instruction: simple.instruction });
    expect(simple.instruction).toMatch(/^# Retail customer service policy/);
    expect(ts.info.user).toBe('scripted');
  });

  it('scores the expert 1 with every term true, and ends when the customer does', async () => {
    const steps = await play(new RetailEnv(), compound, await expertActions(compound));
    expect(lastOf(steps)).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { success: true, score: 1, reason: 'user_stop', terms: { db_match: true, outputs: true, policy: true }, db_diff: [], violations: [] } });
    expect((lastOf(steps).info.outputs as { required: string[] }).required).toEqual(compound.outputs);
    expect(steps.slice(1, -1).every((s) => s.reward === 0 && !isDone(s))).toBe(true);
  });

  it('fails each term alone: the right change with a forbidden read, before authentication, or unconfirmed; the right change without the answer', async () => {
    const actions = await expertActions(compound);
    const me = compound.db.users[compound.userId] as User;
    const theirs = Object.values(compound.db.orders).find((o) => o.user_id !== me.user_id)?.order_id as string;
    const auth = actions.findIndex((a) => a.tool.startsWith('find_user_id'));
    const write = actions.findIndex(isWrite);

    // The right change, plus a look at another customer's order: refused, and the policy term fails.
    const snoop = [...actions.slice(0, auth + 1), { tool: 'get_order_details', params: { order_id: theirs } }, ...actions.slice(auth + 1)];
    const s1 = await play(new RetailEnv(), compound, snoop);
    expect(s1[auth + 2]).toMatchObject({ reward: 0, info: { error: { code: 'policy_violation' } } });
    expect(s1[auth + 2]?.observation).toMatch(/^Refused by policy: that belongs to another customer/);
    expect(lastOf(s1)).toMatchObject({ reward: 0, info: { success: false, terms: { db_match: true, outputs: true, policy: false }, violations: [{ rule: 'other_user', step: auth + 2 }] } });

    // Reading the customer's own order before authenticating them.
    const early = [{ tool: 'get_user_details', params: { user_id: me.user_id } }, ...actions];
    expect(lastOf(await play(new RetailEnv(), compound, early))).toMatchObject({ reward: 0, info: { terms: { db_match: true, outputs: true, policy: false }, violations: [{ rule: 'unauthenticated', step: 1 }] } });

    // The change without the confirmation exchange: refused, so the store is not changed either.
    const unconfirmed = [...actions.slice(0, write - 1), ...actions.slice(write)];
    const s3 = await play(new RetailEnv(), compound, unconfirmed);
    expect(s3[write]?.observation).toMatch(/^Refused by policy: the customer has not confirmed this change/);
    expect(lastOf(s3)).toMatchObject({ reward: 0, info: { terms: { db_match: false, policy: false }, violations: [{ rule: 'unconfirmed' }] } });
    // Asking for the yes afterwards and making the change still fails: the refused call stays on record.
    const late = [...actions.slice(0, write - 1), actions[write] as Action, ...actions.slice(write - 1)];
    expect(lastOf(await play(new RetailEnv(), compound, late))).toMatchObject({ reward: 0, info: { terms: { db_match: true, outputs: true, policy: false } } });

    // The right change, but the customer's question is never answered: they give up.
    const answer = actions.findLastIndex((a) => a.tool === 'respond');
    const silent = [...actions.slice(0, answer), say("I'm afraid I can't tell you that.")];
    const s4 = await play(new RetailEnv(), compound, silent);
    expect(lastOf(s4)).toMatchObject({ reward: 0, info: { reason: 'user_gave_up', terms: { db_match: true, outputs: false, policy: true }, outputs: { missing: compound.outputs } } });
  });

  it('fails db_match for the wrong change, naming the order that differs', async () => {
    const actions = await expertActions(simple);
    const write = actions.findIndex(isWrite);
    const right = actions[write] as Action;
    const reason = right.params.reason === 'no longer needed' ? 'ordered by mistake' : 'no longer needed';
    const wrong = actions.map((a, i) => (i === write ? { ...a, params: { ...a.params, reason } } : a));
    const steps = await play(new RetailEnv(), simple, wrong);
    expect(lastOf(steps)).toMatchObject({ reward: 0, info: { terms: { db_match: false, outputs: true, policy: true }, db_diff: [`orders/${String(right.params.order_id)}`] } });
    // A transfer ends the episode at once; the store is right but the conversation should not have been handed over.
    const transferred = [...actions, { tool: 'transfer_to_human_agents', params: { summary: 'x' } }];
    const t = await play(new RetailEnv(), simple, [...transferred.slice(0, -2), transferred[transferred.length - 1] as Action]);
    expect(lastOf(t)).toMatchObject({ reward: 0, terminated: true, observation: 'Transfer successful.', info: { reason: 'transferred', terms: { db_match: false }, db_diff: ['transferred'] } });
  });

  it('answers store errors and invalid calls with info.error, changing nothing', async () => {
    const env = new RetailEnv();
    await env.reset({ task: simple.id, seed: 2 });
    const me = simple.db.users[simple.userId] as User;
    expect(await env.step({ tool: 'fly', params: {} })).toMatchObject({ reward: 0, terminated: false, info: { error: { code: 'unknown_tool' } } });
    expect(await env.step({ tool: 'cancel_pending_order', params: { order_id: '#W1', reason: 'bored' } })).toMatchObject({ info: { error: { code: 'invalid_params' } } });
    await env.step(say('Your email, please?'));
    await env.step({ tool: 'find_user_id_by_email', params: { email: me.email } });
    const missing = await env.step({ tool: 'get_order_details', params: { order_id: '#W0000000' } });
    expect(missing).toMatchObject({ observation: "Error: order '#W0000000' not found", info: { error: { code: 'order_not_found' } } });
    expect((await env.step({ tool: 'think', params: { thought: 'hmm' } })).observation).toBe('Thought recorded.');
    expect(env.database).toEqual(simple.db);
  });

  it('is deterministic for the same seed, across instances; the user\'s phrasing follows the seed', async () => {
    const actions = [say('Could you tell me your email?'), say('lorem ipsum'), say('Which order is it? The order id, please.'), say('dolor sit')];
    const a = await play(new RetailEnv(), simple, actions, 11);
    const b = await play(new RetailEnv(), simple, actions, 11);
    expect(b).toEqual(a);
    const texts = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5, 6]) texts.add((await play(new RetailEnv(), simple, actions, seed)).map((s) => s.observation).join('\n'));
    expect(texts.size).toBeGreaterThan(1);
    // Without a task, the seed draws a training task.
    const r1 = await new RetailEnv().reset({ seed: 5 });
    const r2 = await new RetailEnv().reset({ seed: 5 });
    expect((r1.info.task as TaskInfo).id).toBe((r2.info.task as TaskInfo).id);
  });

  it('validates its options and lists its tasks by split', () => {
    expect(() => new RetailEnv({ users: 'scripted' })).toThrow(ConfigError);
    expect(() => new RetailEnv({ user: 'gpt' })).toThrow(/unknown user 'gpt'/);
    expect(() => new RetailEnv({ user: 'openai:m' }, {})).toThrow(/OPENAI_API_KEY/);
    const env = new RetailEnv();
    expect(env.listTasks('train')).toHaveLength(450);
    expect(env.countTasks('heldout')).toBe(90);
    const wrapped = make(CONVERSATION_ENV_ID);
    expect(wrapped.countTasks?.()).toBe(540);
    expect(env.tools.map((t) => `${t.name}:${t.category}`)).toEqual([
      'respond:communicate', 'find_user_id_by_email:read', 'find_user_id_by_name_zip:read', 'get_user_details:read', 'get_order_details:read', 'get_product_details:read',
      'list_all_product_types:read', 'cancel_pending_order:write', 'modify_pending_order_address:write', 'modify_pending_order_payment:write', 'modify_pending_order_items:write',
      'modify_user_address:write', 'return_delivered_order_items:write', 'exchange_delivered_order_items:write', 'think:think', 'transfer_to_human_agents:submit',
    ]);
  });
});

describe('RetailEnv with a model as the user (loopback OpenAI-compatible server)', () => {
  let api: LoopbackApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('runs an episode end to end: the model plays the customer from the hidden instruction, ###STOP### ends it', async () => {
    // The server's "model" answers as the scripted customer of the same task would, so the expert can succeed.
    const customer = new ScriptedUser();
    customer.start({ instruction: compound.hidden, opening: compound.opening, script: compound.script, seed: 9 });
    api = await LoopbackApi.start((req) => {
      const messages = (req.body as { messages: { role: string; content: string }[] }).messages;
      const turn = customer.answer((messages[messages.length - 1] as { content: string }).content);
      return { body: openaiCompletion(turn.done ? `${turn.text}\n${STOP_TOKEN}` : turn.text) };
    });
    const env = make(CONVERSATION_ENV_ID, { kwargs: { user: `openai:customer-sim@${api.url}/v1`, userApiKey: 'EMPTY' } });
    const steps = (await playEpisode(env, new RetailExpert(), compound.id, 4)).timeSteps;
    expect(steps[0]?.info.user).toBe('openai:customer-sim');
    expect(lastOf(steps)).toMatchObject({ reward: 1, terminated: true, info: { reason: 'user_stop', terms: { db_match: true, outputs: true, policy: true } } });
    const transcript = lastOf(steps).info.transcript as string[];
    expect(transcript[0]).toBe(`user: ${compound.opening}`);
    expect(transcript.filter((l) => l.startsWith('user: ')).length).toBe(transcript.filter((l) => l.startsWith('agent: ')).length + 1);
    const me = compound.db.users[compound.userId] as User;
    expect(transcript.some((l) => l.startsWith('user: ') && l.includes(me.email))).toBe(true);
    expect(lastOf(steps).observation).not.toContain(STOP_TOKEN);
    const first = api.requests[0]?.body as { messages: { role: string; content: string }[] };
    expect(first.messages[0]).toEqual({ role: 'system', content: modelUserPrompt(compound.hidden) });
    expect(api.requests).toHaveLength(transcript.filter((l) => l.startsWith('agent: ')).length);
    await env.close();
  });

  it('truncates with the reason when the user server errors, or does not answer in time', async () => {
    api = await LoopbackApi.start((_r, i) => (i === 0 ? { status: 500, body: { error: { message: 'model crashed', type: 'server_error' } } } : { hang: true }));
    const env = make(CONVERSATION_ENV_ID, { kwargs: { user: `openai:customer-sim@${api.url}/v1`, userApiKey: 'EMPTY', userMaxRetries: 0, userTimeoutMs: 200 } });
    await env.reset({ task: simple.id, seed: 1 });
    const failed = await env.step(say('Hello! Your email, please?'));
    expect(failed).toMatchObject({ reward: 0, terminated: false, truncated: true, info: { reason: 'user_error', success: false, score: 0 } });
    expect(failed.info.user_error).toMatch(/^user openai:customer-sim at http:\/\/127\.0\.0\.1:\d+\/v1: openai \(customer-sim\): HTTP 500 model crashed \(gave up after 1 attempts\)$/);
    await expect(env.step(say('Hello?'))).rejects.toThrow(EpisodeEndedError);
    await env.reset({ task: simple.id, seed: 1 });
    const slow = await env.step(say('Hello! Your email, please?'));
    expect(slow).toMatchObject({ truncated: true, info: { reason: 'user_error' } });
    expect(slow.info.user_error).toMatch(/request timed out: no complete response within 200 ms/);
    await env.close();
  });
});
