import { afterEach, describe, expect, it } from 'vitest';
import type { Action, TaskInfo, TimeStep, ToolSpec } from '../../core/types.js';
import { LoopbackApi, openaiError } from '../../reward/judge/__fixtures__/loopback-api.js';
import { ConversationEnv } from './conversation-env.js';
import { RESPOND_TOOL } from './respond-tool.js';
import { DEFAULT_PHRASES, type UserScript } from './scripted-user.js';
import { createUser } from './user-spec.js';
import type { SimulatedUser, UserEpisode } from './user.js';

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
