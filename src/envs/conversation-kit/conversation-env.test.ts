import { afterEach, describe, expect, it } from 'vitest';
import type { Action, TaskInfo, TimeStep, ToolSpec } from '../../core/types.js';
import { LoopbackApi, openaiError } from '../../reward/judge/__fixtures__/loopback-api.js';
import { ConversationEnv, type GroupEpisode } from './conversation-env.js';
import { RESPOND_TOOL } from './respond-tool.js';
import { DEFAULT_PHRASES, type UserScript } from './scripted-user.js';
import { createUser } from './user-spec.js';
import { type SimulatedUser, type UserEpisode, type UserTurn, UserSimulatorError } from './user.js';

// A second domain on the same base, the size of a test: a library desk where a patron renews a book. It shows
// what a conversation env writes (its task, its tools, its reward) and what the base does for it.

const SCRIPT: UserScript = {
  facts: [{ key: 'card', asked: /library card/i, answers: ['My card is 4711.', 'It is card 4711.'] }],
  goals: [
    {
      kind: 'action',
      id: 'renew',
      request: ['I want to renew "Dune".'],
      facts: [],
      confirm: [['dune']],
      correction: ['No, "Dune" please.'],
    },
  ],
  patience: 1,
  phrases: DEFAULT_PHRASES,
};
const EPISODE: Omit<UserEpisode, 'seed'> = { instruction: 'You are patron 4711 and want "Dune" renewed.', opening: 'Hi! I want to renew a book.', script: SCRIPT };
const RENEW: ToolSpec = {
  name: 'renew',
  description: 'Renew a book.',
  category: 'write',
  parameters: { type: 'object', properties: { book: { type: 'string' } }, required: ['book'], additionalProperties: false },
};
const HANDOFF: ToolSpec = { name: 'hand_off', description: 'Call the librarian.', category: 'submit', parameters: { type: 'object', properties: {}, additionalProperties: false } };

class LibraryEnv extends ConversationEnv {
  readonly domain = 'generic';
  readonly tools = [RESPOND_TOOL, RENEW, HANDOFF];
  renewed: string | undefined;

  constructor(user: SimulatedUser) {
    super(user);
  }

  protected begin(): { task: TaskInfo; user: Omit<UserEpisode, 'seed'> } {
    this.renewed = undefined;
    return { task: { id: 'library-1', domain: 'generic', instruction: `Serve the patron.\n\n${EPISODE.opening}` }, user: EPISODE };
  }

  protected onTool(action: Action): TimeStep {
    if (action.tool === 'hand_off') return this.conclude('The librarian takes over.', 'handed_off');
    this.renewed = String(action.params.book);
    return this.observe(`Renewed ${this.renewed}.`);
  }

  protected outcome(): { reward: number; success: boolean; info: Record<string, unknown> } {
    const ok = this.renewed === 'Dune';
    return { reward: ok ? 1 : 0, success: ok, info: { terms: { renewed: ok } } };
  }
}

const say = (content: string): Action => ({ tool: 'respond', params: { content } });

let api: LoopbackApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('ConversationEnv', () => {
  it('opens with the user\'s first message, answers respond with the user\'s reply, and scores when the user ends it', async () => {
    const env = new LibraryEnv(createUser({ user: 'scripted' }));
    const first = await env.reset({ seed: 2 });
    expect(first).toMatchObject({ observation: EPISODE.opening, info: { user: 'scripted', task: { id: 'library-1' } } });
    expect((await env.step(say('Which library card?'))).observation).toMatch(/4711/);
    expect((await env.step(say('Shall I renew "Dune"?'))).observation).toMatch(/^Yes/);
    expect(await env.step({ tool: 'renew', params: { book: 'Dune' } })).toMatchObject({ observation: 'Renewed Dune.', reward: 0, terminated: false });
    const end = await env.step(say('Done, it is renewed.'));
    expect(end).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { reason: 'user_stop', success: true, score: 1, terms: { renewed: true } } });
    expect(end.info.transcript).toEqual([
      `user: ${EPISODE.opening}`,
      'agent: Which library card?',
      expect.stringMatching(/^user: .*4711/),
      'agent: Shall I renew "Dune"?',
      expect.stringMatching(/^user: Yes/),
      'agent: Done, it is renewed.',
      expect.stringMatching(/^user: /),
    ]);
  });

  it('ends with user_gave_up when the user gives up, and lets the domain end it with conclude()', async () => {
    const env = new LibraryEnv(createUser({ user: 'scripted' }));
    await env.reset({ seed: 1 });
    expect((await env.step(say('lorem'))).terminated).toBe(false);
    expect(await env.step(say('ipsum'))).toMatchObject({ reward: 0, terminated: true, info: { reason: 'user_gave_up', success: false } });
    await env.reset({ seed: 1 });
    expect(await env.step({ tool: 'hand_off', params: {} })).toMatchObject({ observation: 'The librarian takes over.', terminated: true, info: { reason: 'handed_off', success: false } });
  });

  it('gives the same conversation for the same seed', async () => {
    const run = async (seed: number): Promise<string[]> => {
      const env = new LibraryEnv(createUser({ user: 'scripted' }));
      await env.reset({ seed });
      return [(await env.step(say('Your library card?'))).observation, (await env.step(say('Your library card again?'))).observation];
    };
    expect(await run(8)).toEqual(await run(8));
  });

  it('truncates with reason user_error when a model user cannot answer', async () => {
    api = await LoopbackApi.start(() => ({ status: 400, body: openaiError('model not found') }));
    const env = new LibraryEnv(createUser({ user: `openai:patron@${api.url}/v1`, userApiKey: 'EMPTY' }));
    await env.reset({ seed: 1 });
    const ts = await env.step(say('Hello?'));
    expect(ts).toMatchObject({ terminated: false, truncated: true, reward: 0, info: { reason: 'user_error', success: false, score: 0 } });
    expect(ts.info.user_error).toMatch(/HTTP 400 model not found/);
    expect(ts.observation).toMatch(/^The conversation stopped: the simulated user could not answer/);
  });
});

// A domain with several named participants: a poll where the agent asks each member for their vote. Its
// members are its own scripted users (their script is a vote); the base starts them, routes `hear` and truncates.

/** A member who tells its vote when asked for it, and fails when told to (a model server that errors). */
class Voter implements SimulatedUser<{ vote: string }> {
  readonly kind = 'voter';
  vote = '';
  closed = 0;
  seed = -1;
  start(episode: UserEpisode<{ vote: string }>): void {
    this.vote = episode.script.vote;
    this.seed = episode.seed;
  }
  reply(message: string): Promise<UserTurn> {
    if (message === 'fail') return Promise.reject(new UserSimulatorError('server down'));
    return Promise.resolve({ text: /vote/.test(message) ? `I vote ${this.vote}.` : 'Hm?', done: false });
  }
  close(): Promise<void> {
    this.closed += 1;
    return Promise.resolve();
  }
}

const ASK: ToolSpec = {
  name: 'ask',
  description: 'Ask a member.',
  category: 'communicate',
  parameters: { type: 'object', properties: { name: { type: 'string' }, message: { type: 'string' } }, required: ['name', 'message'], additionalProperties: false },
};

class PollEnv extends ConversationEnv<{ vote: string }> {
  readonly domain = 'generic';
  readonly tools = [ASK];
  readonly voters = new Map<string, Voter>();
  heardFrom: string[] = [];

  constructor() {
    super((name) => {
      const v = new Voter();
      this.voters.set(name, v);
      return v;
    });
  }

  protected begin(): GroupEpisode<{ vote: string }> {
    this.heardFrom = [];
    const member = (vote: string): Omit<UserEpisode<{ vote: string }>, 'seed'> => ({ instruction: `You vote ${vote}.`, opening: 'Hello.', script: { vote } });
    return { task: { id: 'poll-1', domain: 'generic', instruction: 'Poll Ana and Ben.' }, opening: 'Ana and Ben are here.', participants: { Ana: member('yes'), Ben: member('no') } };
  }

  protected override onUserTurn(_m: string, _t: UserTurn, name: string): void {
    this.heardFrom.push(name);
  }

  protected async onTool(action: Action): Promise<TimeStep> {
    const name = String(action.params.name);
    this.transcript.add({ role: 'agent', speaker: name, text: String(action.params.message) });
    const heard = await this.hear(name, String(action.params.message));
    return heard.stopped ?? this.observe(heard.turn.text);
  }

  protected outcome(): { reward: number; success: boolean; info: Record<string, unknown> } {
    return { reward: 0, success: false, info: {} };
  }
}

describe('ConversationEnv with several participants', () => {
  it('starts one user per participant with its own seed, routes hear(name) and names speakers in the transcript', async () => {
    const env = new PollEnv();
    const first = await env.reset({ seed: 3 });
    expect(first).toMatchObject({ observation: 'Ana and Ben are here.', info: { user: 'voter', participants: ['Ana', 'Ben'] } });
    const [ana, ben] = [env.voters.get('Ana') as Voter, env.voters.get('Ben') as Voter];
    expect(ana.vote).toBe('yes');
    expect(ben.vote).toBe('no');
    expect(ana.seed).not.toBe(ben.seed);
    expect((await env.step({ tool: 'ask', params: { name: 'Ben', message: 'Your vote?' } })).observation).toBe('I vote no.');
    expect(env.heardFrom).toEqual(['Ben']);
    // A second episode reuses the members; closing the env closes each once.
    await env.reset({ seed: 3 });
    expect(env.voters.size).toBe(2);
    const failed = await env.step({ tool: 'ask', params: { name: 'Ana', message: 'fail' } });
    expect(failed).toMatchObject({ truncated: true, terminated: false, reward: 0, info: { reason: 'user_error', user_error: 'server down' } });
    expect(failed.observation).toBe('The conversation stopped: participant Ana could not answer (server down).');
    expect(failed.info.transcript).toEqual(['Ana: Hello.', 'Ben: Hello.', 'agent to Ana: fail']);
    await env.close();
    expect([ana.closed, ben.closed]).toEqual([1, 1]);
  });
});
