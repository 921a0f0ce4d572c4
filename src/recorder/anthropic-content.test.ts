import { describe, expect, it } from 'vitest';
import { feedAnthropicAssistantBlocks, feedAnthropicUserContent } from './anthropic-content.js';
import { ConversationSteps } from './conversation.js';
import type { PathProblem } from './openai-messages.js';

describe('Anthropic content blocks', () => {
  it('maps thinking, tool_use, tool_result errors and attachments', () => {
    const conv = new ConversationSteps();
    const problems: PathProblem[] = [];
    feedAnthropicUserContent(conv, 'task', '$', problems);
    conv.assistant('m1');
    feedAnthropicAssistantBlocks(conv, [
      { type: 'thinking', thinking: 'plan', signature: 'sig' },
      { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a' } },
      { type: 'tool_use', id: 't2', input: {} },
    ], '$.content', problems, { startedAt: '2025-01-01T00:00:00.000Z' });
    const matched = feedAnthropicUserContent(conv, [
      { type: 'tool_result', tool_use_id: 't1', is_error: true, content: [{ type: 'text', text: 'denied' }, { type: 'image', source: { data: 'x' } }] },
      { type: 'tool_result', tool_use_id: 'nope', content: 'lost' },
      { type: 'text', text: '[Request interrupted by user]' },
    ], '$.content', problems, { endedAt: '2025-01-01T00:00:02.000Z', resultMetadata: { toolUseResult: 'x' } });
    expect(matched).toBe(1);
    const done = conv.finish();
    expect(done.instruction).toEqual(['task']);
    const [step] = done.steps;
    expect(step).toMatchObject({ tool: 'Read', params: { file_path: 'a' }, observation: 'denied', thought: 'plan', durationMs: 2000, error: { code: 'tool_error', message: 'denied' } });
    expect(step?.metadata).toMatchObject({ thinkingSignatures: ['sig'], toolUseResult: 'x', observationAttachments: [{ type: 'image', source: { data: 'x' } }], userMessages: ['[Request interrupted by user]'] });
    expect(problems.map((p) => p.path)).toEqual(['$.content[2].name', '$.content[1]']);
  });
});
