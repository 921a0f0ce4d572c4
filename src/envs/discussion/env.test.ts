import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, EpisodeEndedError } from '../../core/errors.js';
import { make } from '../../core/registry.js';
import { lastOf, playEpisode, replayActions } from '../../core/__fixtures__/play-episode.js';
import { type Action, type AgentEnv, isDone, type TaskInfo, type TimeStep } from '../../core/types.js';
import { anthropicText, LoopbackApi, openaiCompletion } from '../../reward/judge/__fixtures__/loopback-api.js';
import { modelUserPrompt } from '../conversation-kit/model-user.js';
import { registerBuiltinEnvs } from '../register.js';
import { DISCUSSION_ENV_ID, DiscussionEnv } from './env.js';
import { DiscussionExpert } from './expert.js';
import { factText } from './facts.js';
import { ScriptedParticipant } from './participant.js';
import { type DiscussionTask, listDiscussionTasks } from './tasks.js';

beforeAll(() => registerBuiltinEnvs());

/** Runs the expert on `env` and returns every time step (the first is the reset's) and its actions. */
async function runExpert(env: Pick<AgentEnv, 'reset' | 'step' | 'tools'>, task: DiscussionTask, seed = 1): Promise<{ steps: TimeStep[]; actions: Action[] }> {
  const r = await playEpisode(env, new DiscussionExpert(), task.id, seed);
  return { steps: r.timeSteps, actions: r.steps.map((s) => s.action) };
}

/** Plays `actions` in a fresh environment; returns every time step. */
const play = (task: DiscussionTask, actions: readonly Action[], seed = 1): Promise<TimeStep[]> => replayActions(new DiscussionEnv(), task.id, actions, seed);
const decide = (choice: string, rationale: string): Action => ({ tool: 'decide', params: { choice, rationale } });
const quote = (task: DiscussionTask): string => task.decisive.map(factText).join('; ');

const tasks = listDiscussionTasks('train');
/** Three members, one of them reticent and one opinionated. */
const mixed = tasks.find((t) => t.participants.length === 3 && t.participants.some((p) => p.trait === 'reticent') && t.participants.some((p) => p.trait === 'opinionated')) as DiscussionTask;

describe('DiscussionEnv', () => {
  it('opens with the members\' first words and the public task', async () => {
    const ts = await new DiscussionEnv().reset({ task: mixed.id, seed: 3 });
    expect(ts.observation).toBe(mixed.opening);
    for (const p of mixed.participants) expect(ts.observation).toContain(`${p.name}: ${p.opening}`);
    expect(ts.info).toMatchObject({ user: 'scripted', participants: mixed.participants.map((p) => p.name), task: { id: mixed.id, domain: 'discussion', instruction: mixed.instruction } });
  });

  it('scores the expert 1 with every term true, and shows each member\'s turns in the transcript', async () => {
    const { steps } = await runExpert(new DiscussionEnv(), mixed);
    expect(lastOf(steps)).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { success: true, score: 1, reason: 'decided', terms: { decision: true, pooled: true, rationale: true }, choice: mixed.correct, unpooled: [], uncited: [] } });
    expect(steps.slice(1, -1).every((s) => s.reward === 0 && !isDone(s))).toBe(true);
    const transcript = lastOf(steps).info.transcript as string[];
    for (const p of mixed.participants) expect(transcript.some((l) => l.startsWith(`${p.name}: `) && l.includes(p.facts[0]?.cue as string))).toBe(true);
    expect(transcript.some((l) => l.startsWith('agent to everyone: '))).toBe(true);
  });

  it('fails each term alone: the briefing\'s favourite after pooling, the right choice without pooling, a rationale that quotes nothing', async () => {
    const { actions } = await runExpert(new DiscussionEnv(), mixed);
    const pooling = actions.slice(0, -1);
    // Deciding from the shared facts only, at once: every term fails.
    expect(lastOf(await play(mixed, [decide(mixed.favourite, `The briefing favours ${mixed.favourite}.`)]))).toMatchObject({ reward: 0, info: { terms: { decision: false, pooled: false, rationale: false } } });
    // Everything heard and quoted, but the favourite chosen: only the decision fails.
    expect(lastOf(await play(mixed, [...pooling, decide(mixed.favourite, quote(mixed))]))).toMatchObject({ reward: 0, info: { success: false, terms: { decision: false, pooled: true, rationale: true }, correct: mixed.correct } });
    // The right choice, with the right quotes, but without hearing the members: only pooling fails.
    const guessed = lastOf(await play(mixed, [decide(mixed.correct, quote(mixed))]));
    expect(guessed).toMatchObject({ reward: 0, info: { terms: { decision: true, pooled: false, rationale: true } } });
    expect((guessed.info.unpooled as { holder: string }[]).map((u) => u.holder)).toEqual(mixed.participants.map((p) => p.name));
    // Asking only the group leaves out the members who keep quiet there.
    const groupOnly = lastOf(await play(mixed, [actions[0] as Action, decide(mixed.correct, quote(mixed))]));
    expect(groupOnly).toMatchObject({ reward: 0, info: { terms: { decision: true, pooled: false, rationale: true } } });
    expect((groupOnly.info.unpooled as { holder: string }[]).map((u) => u.holder)).toEqual(mixed.participants.filter((p) => p.trait !== 'open').map((p) => p.name));
    // Pooled and right, but the rationale quotes no fact: only the rationale fails.
    const vague = lastOf(await play(mixed, [...pooling, decide(mixed.correct, 'It has the highest total.')]));
    expect(vague).toMatchObject({ reward: 0, info: { terms: { decision: true, pooled: true, rationale: false } } });
    expect(vague.info.uncited).toEqual(mixed.decisive.map(factText));
  });

  it('answers an unknown member or option, and think, without ending the meeting', async () => {
    const env = new DiscussionEnv();
    await env.reset({ task: mixed.id, seed: 2 });
    expect(await env.step({ tool: 'address', params: { participant: 'Zorro', message: 'Hi' } })).toMatchObject({ reward: 0, terminated: false, info: { error: { code: 'unknown_participant' } } });
    expect(await env.step(decide('Nobody', 'x'))).toMatchObject({ terminated: false, info: { error: { code: 'unknown_option' } } });
    expect(await env.step({ tool: 'decide', params: { choice: 'x' } })).toMatchObject({ terminated: false, info: { error: { code: 'invalid_params' } } });
    expect((await env.step({ tool: 'think', params: { thought: 'hmm' } })).observation).toBe('Thought recorded.');
    const name = mixed.participants[0]?.name as string;
    expect((await env.step({ tool: 'address', params: { participant: name.toLowerCase(), message: 'Hello' } })).observation).toMatch(new RegExp(`^${name}: `));
    expect(await env.step(decide(mixed.correct.toUpperCase(), 'x'))).toMatchObject({ terminated: true, info: { choice: mixed.correct, reason: 'decided' } });
  });

  it('is deterministic for the same seed, across instances; the members\' phrasing follows the seed', async () => {
    const { actions } = await runExpert(new DiscussionEnv(), mixed);
    const a = await play(mixed, actions, 11);
    expect(await play(mixed, actions, 11)).toEqual(a);
    const texts = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5, 6]) texts.add((await play(mixed, actions, seed)).map((s) => s.observation).join('\n'));
    expect(texts.size).toBeGreaterThan(1);
    const r1 = await new DiscussionEnv().reset({ seed: 5 });
    const r2 = await new DiscussionEnv().reset({ seed: 5 });
    expect((r1.info.task as TaskInfo).id).toBe((r2.info.task as TaskInfo).id);
  });

  it('validates its options and lists its tasks by split', () => {
    expect(() => new DiscussionEnv({ users: 'scripted' })).toThrow(ConfigError);
    expect(() => new DiscussionEnv({ user: 'gpt' })).toThrow(/unknown user 'gpt'/);
    expect(() => new DiscussionEnv({ user: 'openai:m' }, {})).toThrow(/OPENAI_API_KEY/);
    const env = new DiscussionEnv();
    expect(env.listTasks('train')).toHaveLength(240);
    expect(env.countTasks('heldout')).toBe(60);
    expect(make(DISCUSSION_ENV_ID).countTasks?.()).toBe(300);
    expect(env.tools.map((t) => `${t.name}:${t.category}`)).toEqual(['address:communicate', 'ask_group:communicate', 'summarise:communicate', 'think:think', 'decide:submit']);
  });
});

describe('DiscussionEnv with models as the members (loopback servers)', () => {
  let api: LoopbackApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  /** Scripted members of `task` answering as the model: the system prompt names who is asked. */
  function members(task: DiscussionTask): (system: string, last: string) => string {
    const sims = new Map(task.participants.map((p) => {
      const s = new ScriptedParticipant();
      s.start({ instruction: p.hidden, opening: p.opening, script: p.script, seed: 7 });
      return [modelUserPrompt(p.hidden), s] as const;
    }));
    return (system, lastMessage) => {
      const sim = sims.get(system);
      if (!sim) throw new Error('unknown participant prompt');
      return sim.answer(lastMessage);
    };
  }

  for (const provider of ['openai', 'anthropic'] as const) {
    it(`runs an episode end to end with ${provider} members; the transcript shows their turns`, async () => {
      const answer = members(mixed);
      api = await LoopbackApi.start((req) => {
        if (provider === 'openai') {
          const messages = (req.body as { messages: { role: string; content: string }[] }).messages;
          return { body: openaiCompletion(answer(messages[0]?.content ?? '', messages[messages.length - 1]?.content ?? '')) };
        }
        const body = req.body as { system: string; messages: { role: string; content: string }[] };
        return { body: anthropicText(answer(body.system, body.messages[body.messages.length - 1]?.content ?? '')) };
      });
      const user = provider === 'openai' ? `openai:member-sim@${api.url}/v1` : `anthropic:member-sim@${api.url}`;
      const env = make(DISCUSSION_ENV_ID, { kwargs: { user, userApiKey: 'EMPTY' } });
      const { steps } = await runExpert(env, mixed, 4);
      expect(steps[0]?.info.user).toBe(`${provider}:member-sim`);
      expect(lastOf(steps)).toMatchObject({ reward: 1, terminated: true, info: { reason: 'decided', terms: { decision: true, pooled: true, rationale: true } } });
      const transcript = lastOf(steps).info.transcript as string[];
      for (const p of mixed.participants) expect(transcript.filter((l) => l.startsWith(`${p.name}: `)).length, p.name).toBeGreaterThan(1);
      // One request per member for each group message, one per direct question.
      const asked = lastOf(steps).info.transcript as string[];
      const group = asked.filter((l) => l.startsWith('agent to everyone: ')).length;
      const direct = asked.filter((l) => l.startsWith('agent to ') && !l.startsWith('agent to everyone: ')).length;
      expect(api.requests).toHaveLength(group * mixed.participants.length + direct);
      // A member's chat opens with the facilitator's welcome and the member's opening, after its hidden instruction.
      const firstBody = api.requests[0]?.body as { system?: string; messages: { role: string; content: string }[] };
      const chat = provider === 'openai' ? firstBody.messages.slice(1) : firstBody.messages;
      const member = mixed.participants[0] as (typeof mixed.participants)[number];
      expect(provider === 'openai' ? firstBody.messages[0]?.content : firstBody.system).toBe(modelUserPrompt(member.hidden));
      expect(chat.slice(0, 2)).toEqual([{ role: 'user', content: `Welcome, everyone. ${mixed.scenario.question}` }, { role: 'assistant', content: member.opening }]);
      await env.close();
    });
  }

  it('truncates with the reason when a member\'s server errors, or does not answer in time', async () => {
    api = await LoopbackApi.start((_r, i) => (i === 0 ? { status: 500, body: { error: { message: 'model crashed', type: 'server_error' } } } : { hang: true }));
    const env = make(DISCUSSION_ENV_ID, { kwargs: { user: `openai:member-sim@${api.url}/v1`, userApiKey: 'EMPTY', userMaxRetries: 0, userTimeoutMs: 200 } });
    await env.reset({ task: mixed.id, seed: 1 });
    const failed = await env.step({ tool: 'ask_group', params: { question: 'What do you all know?' } });
    expect(failed).toMatchObject({ reward: 0, terminated: false, truncated: true, info: { reason: 'user_error', success: false, score: 0 } });
    expect(failed.observation).toMatch(new RegExp(`^The conversation stopped: participant ${mixed.participants[0]?.name} could not answer`));
    expect(failed.info.user_error).toMatch(/HTTP 500 model crashed/);
    await expect(env.step({ tool: 'think', params: { thought: 'x' } })).rejects.toThrow(EpisodeEndedError);
    await env.reset({ task: mixed.id, seed: 1 });
    const name = mixed.participants[1]?.name as string;
    const slow = await env.step({ tool: 'address', params: { participant: name, message: 'Hello?' } });
    expect(slow).toMatchObject({ truncated: true, info: { reason: 'user_error' } });
    expect(slow.info.user_error).toMatch(/request timed out: no complete response within 200 ms/);
    await env.close();
  });
});
