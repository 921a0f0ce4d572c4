import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { make } from '../../core/registry.js';
import { lastOf, playEpisode, replayActions } from '../../core/__fixtures__/play-episode.js';
import { type Action, type AgentEnv, isDone, type TaskInfo, type TimeStep } from '../../core/types.js';
import { LoopbackApi, openaiCompletion } from '../../reward/judge/__fixtures__/loopback-api.js';
import { modelUserPrompt } from '../conversation-kit/model-user.js';
import { ScriptedUser } from '../conversation-kit/scripted-user.js';
import { STOP_TOKEN } from '../conversation-kit/user.js';
import { registerBuiltinEnvs } from '../register.js';
import { ADVISORY_ENV_ID, AdvisoryEnv } from './env.js';
import { AdvisoryExpert } from './expert.js';
import { flightFits, hotelFits, planValue, type TripPlan } from './plan.js';
import { combinations, solveTrip } from './solver.js';
import { type AdvisoryTask, listAdvisoryTasks } from './tasks.js';

beforeAll(() => registerBuiltinEnvs());

/** Runs the expert on a task (any env, any user); returns every time step and the expert's actions. */
async function runExpert(env: AgentEnv, task: AdvisoryTask, seed = 1): Promise<{ steps: TimeStep[]; actions: Action[] }> {
  const r = await playEpisode(env, new AdvisoryExpert(), task.id, seed);
  return { steps: r.timeSteps, actions: r.steps.map((s) => s.action) };
}

const say = (content: string): Action => ({ tool: 'respond', params: { content } });
const recommend = (p: TripPlan): Action => ({ tool: 'recommend', params: { outbound_flight: p.outbound, return_flight: p.return, hotel: p.hotel, activities: p.activities } });

/** The least valuable plan that meets every constraint (the feasible but poor plan). */
function worstFeasible(task: AdvisoryTask): { plan: TripPlan; value: number } {
  const r = task.request;
  const best = task.best.plan;
  let worst: { plan: TripPlan; value: number } | undefined;
  const out = task.world.flights.find((f) => f.id === best.outbound);
  const back = task.world.flights.find((f) => f.id === best.return);
  if (!out || !back || !flightFits(r, out, 'outbound') || !flightFits(r, back, 'return')) throw new Error('best flights do not fit');
  for (const hotel of task.world.hotels.filter((h) => hotelFits(r, h))) {
    for (const set of combinations(task.world.activities, r.activities.count)) {
      if (r.activities.category !== undefined && !set.some((a) => a.category === r.activities.category)) continue;
      const cost = (out.price + back.price + set.reduce((s, a) => s + a.price, 0)) * r.travellers + hotel.pricePerNight * r.nights;
      const value = planValue(r.nights, hotel, set);
      if (cost <= r.budget && (!worst || value < worst.value)) worst = { plan: { ...best, hotel: hotel.id, activities: set.map((a) => a.id) }, value };
    }
  }
  return worst as { plan: TripPlan; value: number };
}

const tasks = listAdvisoryTasks('train');
/** A task whose worst feasible plan is worth less than 90% of the best. */
const task = tasks.find((t) => worstFeasible(t).value < 0.9 * t.best.value && t.request.hotel.amenities.length > 0) as AdvisoryTask;

describe('AdvisoryEnv', () => {
  it('opens with the client\'s first message and the public task; the instruction states the brief', async () => {
    const ts = await new AdvisoryEnv().reset({ task: task.id, seed: 3 });
    expect(ts.observation).toBe(task.opening);
    expect(ts.info.task as TaskInfo).toMatchObject({ id: task.id, domain: 'advisory', split: 'train', instruction: task.instruction });
    expect(ts.info.user).toBe('scripted');
  });

  it('scores the expert 1: asked everything, every check passed, the best value; ends with reason recommended', async () => {
    const { steps, actions } = await runExpert(new AdvisoryEnv(), task);
    expect(lastOf(steps)).toMatchObject({
      reward: 1,
      terminated: true,
      truncated: false,
      observation: 'Your recommendation has been sent to the client.',
      info: { success: true, score: 1, reason: 'recommended', terms: { recommended: true, elicited: true, constraints: true, value: 1 }, missing_topics: [], failed: [], best: task.best },
    });
    expect(steps.slice(1, -1).every((s) => s.reward === 0 && !isDone(s))).toBe(true);
    expect(actions.filter((a) => a.tool === 'respond')).toHaveLength(8);
    // The client told each wish only when asked: its reply to the budget question names the budget and nothing else.
    const transcript = lastOf(steps).info.transcript as string[];
    const budget = transcript[transcript.indexOf('agent: What is your total budget for the whole trip?') + 1] as string;
    expect(budget).toMatch(/^user: .*\$[\d,]+ /);
    expect(budget).not.toMatch(/hotel must|nonstop|activities,/i);
  });

  it('fails each term alone: a plan that breaks a hard constraint, a feasible but poor plan, a recommendation without asking, none at all', async () => {
    const { actions } = await runExpert(new AdvisoryEnv(), task);
    const asks = actions.slice(0, -1);
    // The best-rated plan, ignoring the budget: it breaks the budget alone.
    const top = solveTrip(task.request, task.world, true);
    const over = lastOf(await replayActions(new AdvisoryEnv(), task.id, [...asks, recommend(top?.plan as TripPlan)]));
    expect(over).toMatchObject({ reward: 0, info: { success: false, terms: { elicited: true, constraints: false }, failed: ['budget'] } });
    expect((over.info.terms as { value: number }).value).toBeGreaterThan(1 - 1e-9);
    // The best plan in a hotel without an amenity the client insisted on.
    const lacking = task.world.hotels.find((h) => !task.request.hotel.amenities.every((a) => h.amenities.includes(a)));
    const noAmenity = lastOf(await replayActions(new AdvisoryEnv(), task.id, [...asks, recommend({ ...task.best.plan, hotel: lacking?.id as string })]));
    expect(noAmenity).toMatchObject({ reward: 0, info: { terms: { elicited: true, constraints: false } } });
    expect(noAmenity.info.failed).toContain('hotel_amenities');
    // A feasible but poor plan: value / best value, below the success threshold.
    const poor = worstFeasible(task);
    const p = lastOf(await replayActions(new AdvisoryEnv(), task.id, [...asks, recommend(poor.plan)]));
    expect(p).toMatchObject({ info: { success: false, terms: { elicited: true, constraints: true }, failed: [] } });
    expect(p.reward).toBeCloseTo(poor.value / task.best.value, 4);
    expect(p.reward).toBeGreaterThan(0);
    expect(p.reward).toBeLessThan(0.9);
    // The best plan recommended without asking (or after asking about all but the activities): elicited fails.
    const blind = lastOf(await replayActions(new AdvisoryEnv(), task.id, [recommend(task.best.plan)]));
    expect(blind).toMatchObject({ reward: 0, info: { success: false, terms: { elicited: false, constraints: true, value: 1 }, missing_topics: ['origin', 'dates', 'travellers', 'budget', 'hotel', 'flights', 'activities'] } });
    const partial = lastOf(await replayActions(new AdvisoryEnv(), task.id, [...asks.slice(0, 6), ...asks.slice(7), recommend(task.best.plan)]));
    expect(partial).toMatchObject({ reward: 0, info: { terms: { elicited: false, constraints: true }, missing_topics: ['activities'] } });
    // No recommendation: the client gives up on an advisor that says nothing useful.
    const silent = lastOf(await replayActions(new AdvisoryEnv(), task.id, [say('Hello.'), say('Hmm.'), say('Let me see.'), say('One moment.')]));
    expect(silent).toMatchObject({ reward: 0, terminated: true, info: { reason: 'user_gave_up', terms: { recommended: false } } });
  });

  it('answers unknown ids and invalid calls with info.error, and goes on', async () => {
    const env = new AdvisoryEnv();
    await env.reset({ task: task.id, seed: 2 });
    expect(await env.step({ tool: 'fly', params: {} })).toMatchObject({ reward: 0, terminated: false, info: { error: { code: 'unknown_tool' } } });
    expect(await env.step({ tool: 'search_hotels', params: { city: 'X', check_in: 'tomorrow', nights: 2 } })).toMatchObject({ info: { error: { code: 'invalid_params' } } });
    const bad = await env.step({ tool: 'price_plan', params: { outbound_flight: 'FL1', return_flight: 'FL2', hotel: 'HT1', activities: [], travellers: 1 } });
    expect(bad).toMatchObject({ observation: 'Error: no such option: FL1, FL2, HT1', terminated: false, info: { error: { code: 'unknown_option' } } });
    expect((await env.step({ tool: 'think', params: { thought: 'hmm' } })).observation).toBe('Thought recorded.');
    const unknown = await env.step(recommend({ outbound: 'FL1', return: 'FL2', hotel: 'HT1', activities: [] }));
    expect(unknown).toMatchObject({ reward: 0, terminated: true, info: { terms: { constraints: false, value: 0 }, failed: ['known_options'] } });
  });

  it('is deterministic for the same seed, across instances; the client\'s phrasing follows the seed', async () => {
    const { actions } = await runExpert(new AdvisoryEnv(), task);
    const a = await replayActions(new AdvisoryEnv(), task.id, actions, 11);
    const b = await replayActions(new AdvisoryEnv(), task.id, actions, 11);
    expect(b).toEqual(a);
    const texts = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5]) texts.add((await replayActions(new AdvisoryEnv(), task.id, actions, seed)).map((s) => s.observation).join('\n'));
    expect(texts.size).toBeGreaterThan(1);
    const r1 = await new AdvisoryEnv().reset({ seed: 5 });
    const r2 = await new AdvisoryEnv().reset({ seed: 5 });
    expect((r1.info.task as TaskInfo).id).toBe((r2.info.task as TaskInfo).id);
  });

  it('validates its options and lists its tasks by split', () => {
    expect(() => new AdvisoryEnv({ users: 'scripted' })).toThrow(ConfigError);
    expect(() => new AdvisoryEnv({ user: 'gpt' })).toThrow(/unknown user 'gpt'/);
    expect(() => new AdvisoryEnv({ user: 'openai:m' }, {})).toThrow(/OPENAI_API_KEY/);
    const env = new AdvisoryEnv();
    expect(env.listTasks('train')).toHaveLength(300);
    expect(env.countTasks('heldout')).toBe(60);
    expect(make(ADVISORY_ENV_ID).countTasks?.()).toBe(360);
    expect(env.tools.map((t) => `${t.name}:${t.category}`)).toEqual([
      'respond:communicate', 'search_flights:search', 'search_hotels:search', 'search_activities:search', 'price_plan:execute', 'think:think', 'recommend:submit',
    ]);
  });
});

describe('AdvisoryEnv with a model as the user (loopback OpenAI-compatible server)', () => {
  let api: LoopbackApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('runs an episode end to end: the model plays the client from the hidden instruction', async () => {
    // The server's "model" answers as the scripted client of the same task would.
    const client = new ScriptedUser();
    client.start({ instruction: task.hidden, opening: task.opening, script: task.script, seed: 9 });
    api = await LoopbackApi.start((req) => {
      const messages = (req.body as { messages: { role: string; content: string }[] }).messages;
      const turn = client.answer((messages[messages.length - 1] as { content: string }).content);
      return { body: openaiCompletion(turn.done ? `${turn.text}\n${STOP_TOKEN}` : turn.text) };
    });
    const env = make(ADVISORY_ENV_ID, { kwargs: { user: `openai:client-sim@${api.url}/v1`, userApiKey: 'EMPTY' } });
    const { steps } = await runExpert(env, task, 4);
    expect(steps[0]?.info.user).toBe('openai:client-sim');
    expect(lastOf(steps)).toMatchObject({ reward: 1, terminated: true, info: { reason: 'recommended', terms: { elicited: true, constraints: true, value: 1 } } });
    const transcript = lastOf(steps).info.transcript as string[];
    expect(transcript[0]).toBe(`user: ${task.opening}`);
    expect(transcript.filter((l) => l.startsWith('user: ')).length).toBe(transcript.filter((l) => l.startsWith('agent: ')).length + 1);
    expect(transcript.some((l) => l.startsWith('user: ') && l.includes(task.request.origin))).toBe(true);
    const first = api.requests[0]?.body as { messages: { role: string; content: string }[] };
    expect(first.messages[0]).toEqual({ role: 'system', content: modelUserPrompt(task.hidden) });
    expect(api.requests).toHaveLength(8);
    await env.close();
  });

  it('truncates with the reason when the user server errors, or does not answer in time', async () => {
    api = await LoopbackApi.start((_r, i) => (i === 0 ? { status: 500, body: { error: { message: 'model crashed', type: 'server_error' } } } : { hang: true }));
    const env = make(ADVISORY_ENV_ID, { kwargs: { user: `openai:client-sim@${api.url}/v1`, userApiKey: 'EMPTY', userMaxRetries: 0, userTimeoutMs: 200 } });
    await env.reset({ task: task.id, seed: 1 });
    const failed = await env.step(say('Which city will you be flying from?'));
    expect(failed).toMatchObject({ reward: 0, terminated: false, truncated: true, info: { reason: 'user_error', success: false, score: 0 } });
    expect(failed.info.user_error).toMatch(/^user openai:client-sim at http:\/\/127\.0\.0\.1:\d+\/v1: openai \(client-sim\): HTTP 500 model crashed \(gave up after 1 attempts\)$/);
    expect(failed.info.transcript).toEqual([`user: ${task.opening}`, 'agent: Which city will you be flying from?']);
    await env.reset({ task: task.id, seed: 1 });
    const timedOut = await env.step(say('Which city will you be flying from?'));
    expect(timedOut).toMatchObject({ truncated: true, info: { reason: 'user_error' } });
    expect(timedOut.info.user_error).toMatch(/timed out/);
    await env.close();
  });
});
