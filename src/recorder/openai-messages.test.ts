import { describe, expect, it } from 'vitest';
import { ConversationSteps } from './conversation.js';
import { feedOpenAiMessages } from './openai-messages.js';

describe('feedOpenAiMessages', () => {
  it('handles JSON-string tool calls, SWE-agent tool_call_ids, reasoning and bad arguments', () => {
    const conv = new ConversationSteps();
    const fed = feedOpenAiMessages(
      conv,
      [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'go' }, { type: 'image_url', image_url: { url: 'x' } }] },
        {
          role: 'assistant',
          reasoning_content: 'think',
          content: 'doing',
          tool_calls: ['{"id":"c1","function":{"name":"a","arguments":"{\\"x\\":1}"}}', { id: 'c2', function: { name: 'b', arguments: '{oops' } }],
        },
        { role: 'tool', tool_call_ids: ['c2'], content: 'rb' },
        { role: 'tool', tool_call_id: 'c1', content: 'ra' },
        { role: 'critic', content: '?' },
        { role: 'assistant', content: 'done' },
      ],
      { path: '$.m', toolInfo: () => ({ metadata: { seen: true } }) },
    );
    const done = conv.finish();
    expect(fed.systemPrompts).toEqual(['be brief']);
    expect(done.instruction).toEqual(['go']);
    expect(done.steps.map((s) => [s.tool, s.params, s.observation])).toEqual([
      ['a', { x: 1 }, 'ra'],
      ['b', { arguments: '{oops' }, 'rb'],
      ['respond', { content: 'done' }, ''],
    ]);
    expect(done.steps[0]?.thought).toBe('think\n\ndoing');
    expect(done.steps[0]?.metadata).toMatchObject({ toolCallEncoding: 'json-string', seen: true });
    expect(fed.problems.map((p) => [p.path, p.severity])).toEqual([
      ['$.m[2].tool_calls[1].function.arguments', 'warning'],
      ['$.m[5].role', 'warning'],
    ]);
    expect(conv.preStepNotes.userAttachments).toEqual([[{ type: 'image_url', image_url: { url: 'x' } }]]);
  });
});
