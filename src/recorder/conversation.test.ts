import { describe, expect, it } from 'vitest';
import { ConversationSteps } from './conversation.js';

describe('ConversationSteps', () => {
  it('turns a chat into steps: thoughts, parallel calls, results by id, replies', () => {
    const conv = new ConversationSteps();
    conv.user('What is 2+2? Check twice.');
    conv.assistant('r1', { startedAt: '2025-01-01T00:00:00.000Z', metadata: { model: 'm' } });
    conv.thinking('I should compute.');
    conv.text('Let me check.');
    conv.toolCall({ id: 'a', tool: 'calc', params: { x: '2+2' } });
    conv.toolCall({ id: 'b', tool: 'calc', params: { x: '2*2' } });
    conv.toolResult({ id: 'b', observation: '4 (b)', endedAt: '2025-01-01T00:00:01.500Z' });
    conv.toolResult({ id: 'a', observation: 'boom', isError: true });
    conv.assistant('r2');
    conv.text('It is 4.');
    conv.user('Thanks!');
    const done = conv.finish();
    expect(done.instruction).toEqual(['What is 2+2? Check twice.']);
    expect(done.openCalls).toBe(0);
    expect(done.steps.map((s) => [s.tool, s.observation])).toEqual([
      ['calc', 'boom'],
      ['calc', '4 (b)'],
      ['respond', 'Thanks!'],
    ]);
    expect(done.steps[0]?.thought).toBe('I should compute.\n\nLet me check.');
    expect(done.steps[0]?.metadata).toMatchObject({ model: 'm', toolCallId: 'a' });
    expect(done.steps[0]?.error).toEqual({ code: 'tool_error', message: 'boom' });
    expect(done.steps[1]?.thought).toBeUndefined();
    expect(done.steps[1]?.durationMs).toBe(1500);
    expect(done.steps[2]?.params).toEqual({ content: 'It is 4.' });
    expect(done.steps[0]?.group).toBe(done.steps[1]?.group);
  });

  it('pairs results without ids in order, keeps strays, and marks unanswered calls', () => {
    const conv = new ConversationSteps();
    conv.assistant('1');
    conv.toolCall({ tool: 'a', params: {} });
    conv.toolCall({ tool: 'b', params: {} });
    expect(conv.toolResult({ observation: 'ra' })).toBe(true);
    conv.user('interrupting');
    expect(conv.toolResult({ id: 'zzz', observation: 'stray' })).toBe(true); // no ids anywhere: oldest open
    expect(conv.toolResult({ observation: 'extra' })).toBe(false);
    conv.assistant('2');
    conv.toolCall({ id: 'c', tool: 'c', params: {} });
    const done = conv.finish();
    expect(done.steps.map((s) => s.observation)).toEqual(['ra', 'stray', '']);
    expect(done.steps[1]?.metadata.userMessages).toEqual(['interrupting']);
    expect(done.steps[2]?.metadata.missingObservation).toBe(true);
    expect(done.openCalls).toBe(1);
    expect(conv.unmatchedResults).toEqual([{ id: undefined, observation: 'extra' }]);
  });

  it('carries thinking-only messages and trailing text forward', () => {
    const conv = new ConversationSteps();
    conv.assistant('1');
    conv.thinking('hmm');
    conv.endAssistant();
    conv.assistant('2');
    conv.toolCall({ tool: 't', params: {} });
    conv.text('after the call');
    const done = conv.finish();
    expect(done.steps[0]?.thought).toBe('hmm');
    expect(done.trailingThought).toBe('after the call');
  });
});
