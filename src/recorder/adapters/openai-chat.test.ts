import { describe, expect, it } from 'vitest';
import { convertFixture, only, step, tools } from '../__fixtures__/fixtures.js';
import { openAiChatAdapter, openAiOutcome } from './openai-chat.js';

describe('openai-chat cassette adapter', () => {
  it('gpt-4o with a retried tool call', async () => {
    const c = await convertFixture(openAiChatAdapter, 'openai-chat/pydantic-ai-cassette-gpt-4o-tool-retry.yaml');
    expect(c.problems).toEqual([]);
    const t = only(c);
    expect(t.envId).toBe('external/openai-chat-v0');
    expect(t.task).toMatchObject({ id: 'pydantic-ai-cassette-gpt-4o-tool-retry', domain: 'tool-use', instruction: 'What is the weather in CDMX?' });
    expect(t.agent).toEqual({ name: 'openai-chat', model: 'gpt-4o-2024-08-06' });
    expect(tools(t)).toEqual(['durability_get_weather_in_city', 'durability_get_weather_in_city', 'respond']);
    expect(step(t, 0).action.params).toEqual({ city: 'CDMX' });
    expect(step(t, 0).observation).toBe('Did you mean Mexico City?\n\nFix the errors and try again.');
    expect(step(t, 0).startedAt).toBe('2026-05-08T21:37:16.000Z');
    expect(step(t, 0).metadata).toMatchObject({ toolCallId: 'call_TtLEMpCeAhnG48btCDrw8lhl', usage: { total_tokens: 68 }, finishReason: 'tool_calls' });
    expect(step(t, 1).action.params).toEqual({ city: 'Mexico City' });
    expect(step(t, 1).observation).toBe('sunny');
    expect(step(t, 2).action.params).toEqual({ content: 'The weather in Mexico City is currently sunny.' });
    expect(t.outcome).toEqual({ success: false, score: 0, terminated: true, truncated: false, reason: 'responded' });
    expect(t.metadata.interactions).toEqual([0, 1, 2]);
  });

  it('maps finish reasons', () => {
    expect(openAiOutcome('length')).toMatchObject({ truncated: true, reason: 'max_tokens' });
    expect(openAiOutcome('tool_calls')).toMatchObject({ terminated: false, truncated: false, reason: 'incomplete' });
  });
});
