import { describe, expect, it } from 'vitest';
import type { Interaction } from './cassette.js';
import { looksLikeCassette, readInteractions, splitConversations } from './cassette.js';

function interaction(index: number, messages: unknown[]): Interaction {
  return { index, uri: undefined, status: 200, request: { messages }, response: {}, responseDate: undefined, responseHeaders: {} };
}

describe('cassettes', () => {
  it('reads parsed_body and raw body.string, keeping useful headers and the date', () => {
    const { interactions, problems } = readInteractions({
      interactions: [
        {
          request: { uri: 'https://api.openai.com/v1/chat/completions', parsed_body: { messages: [] } },
          response: { status: { code: 200 }, headers: { date: ['Fri, 08 May 2026 21:37:16 GMT'], 'openai-processing-ms': ['819'], server: ['x'] }, body: { string: '{"id":"r"}' } },
        },
        { request: { body: 'not json' }, response: {} },
      ],
    });
    expect(interactions).toHaveLength(1);
    expect(interactions[0]).toMatchObject({ status: 200, response: { id: 'r' }, responseDate: '2026-05-08T21:37:16.000Z', responseHeaders: { 'openai-processing-ms': '819' } });
    expect(problems).toEqual([{ path: '$.interactions[1].request', message: expect.stringMatching(/no JSON body/), severity: 'error' }]);
  });

  it('splits a cassette into conversations by message-list growth', () => {
    const u1 = { role: 'user', content: 'one' };
    const u2 = { role: 'user', content: 'two' };
    const runs = splitConversations([
      interaction(0, [u1]),
      interaction(1, [u1, { role: 'assistant' }, { role: 'tool' }]),
      interaction(2, [u2]),
      interaction(3, [u2, { role: 'assistant' }, { role: 'tool' }]),
      interaction(4, [u2]),
    ]);
    expect(runs.map((r) => r.map((i) => i.index))).toEqual([[0, 1], [2, 3], [4]]);
  });

  it('recognises a cassette head by its API host', () => {
    expect(looksLikeCassette('interactions:\n- request:\n    uri: https://api.anthropic.com/v1/messages', undefined, /api\.anthropic\.com/)).toBe(true);
    expect(looksLikeCassette('interactions:\n- request:\n    uri: https://api.anthropic.com/v1/messages', undefined, /api\.openai\.com/)).toBe(false);
  });
});
