import { describe, expect, it } from 'vitest';
import { convertFixture, only, step, tools } from '../__fixtures__/fixtures.js';
import { anthropicMessagesAdapter, anthropicOutcome } from './anthropic-messages.js';

describe('anthropic-messages cassette adapter', () => {
  it('haiku: four parallel tool_use blocks in one turn', async () => {
    const c = await convertFixture(anthropicMessagesAdapter, 'anthropic-messages/pydantic-ai-cassette-haiku-4.5-parallel-tools.yaml');
    expect(c.problems).toEqual([]);
    const t = only(c);
    expect(t.envId).toBe('external/anthropic-messages-v0');
    expect(t.task.instruction).toBe('Alice, Bob, Charlie and Daisy are a family. Who is the youngest?');
    expect(t.agent).toEqual({ name: 'anthropic-messages', model: 'claude-haiku-4-5-20251001' });
    expect(tools(t)).toEqual(['retrieve_entity_info', 'retrieve_entity_info', 'retrieve_entity_info', 'retrieve_entity_info', 'respond']);
    expect(t.steps.slice(0, 4).map((s) => s.action.params)).toEqual([{ name: 'Alice' }, { name: 'Bob' }, { name: 'Charlie' }, { name: 'Daisy' }]);
    expect(t.steps.slice(0, 4).map((s) => s.metadata?.parallelGroup)).toEqual(
      [0, 1, 2, 3].map((position) => ({ id: 'msg_011S3wxtqL5CVescWqS3zeg2', size: 4, position })),
    );
    expect(step(t, 0).thought).toMatch(/^I'll help you find out who is the youngest/);
    expect(step(t, 1).thought).toBeUndefined();
    expect(step(t, 3).observation).toBe("daisy is bob's daughter and charlie's younger sister");
    expect(String(step(t, 4).action.params.content)).toContain('Daisy is the youngest in the family');
    expect(t.metadata.systemPrompt).toContain('retrieve_entity_info');
    expect(t.metadata.syntheticTimestamps).toBe(true);
    expect(t.outcome.reason).toBe('responded');
  });

  it('sonnet: sequential tools', async () => {
    const t = only(await convertFixture(anthropicMessagesAdapter, 'anthropic-messages/pydantic-ai-cassette-sonnet-4.5-sequential-tools.yaml'));
    expect(t.task.instruction).toBe('Use the registered tools and respond exactly as `Capital: <city>`.');
    expect(t.metadata.systemPrompt).toBe('Always call `country_source` first, then call `capital_lookup` with that result before replying.');
    expect(tools(t)).toEqual(['country_source', 'capital_lookup', 'respond']);
    expect(step(t, 0).action.params).toEqual({});
    expect(step(t, 0).observation).toBe('Japan');
    expect(step(t, 1).action.params).toEqual({ country: 'Japan' });
    expect(step(t, 1).observation).toBe('Tokyo');
    expect(step(t, 1).metadata).toMatchObject({ responseId: 'msg_01KgnnRwGgZEK3kvEGM5nbW8', usage: { output_tokens: 53 } });
    expect(step(t, 2).action.params).toEqual({ content: 'Capital: Tokyo' });
    expect(t.agent.model).toBe('claude-sonnet-4-5-20250929');
    expect(t.outcome).toMatchObject({ terminated: true, reason: 'responded' });
  });

  it('maps stop reasons', () => {
    expect(anthropicOutcome('max_tokens')).toMatchObject({ truncated: true, reason: 'max_tokens' });
    expect(anthropicOutcome('tool_use')).toMatchObject({ reason: 'incomplete' });
  });
});
