import { describe, expect, it } from 'vitest';
import type { RenderedContext } from './chat-format.js';
import { type ChatMLMessage, contextMessages, contextPrompt, renderChatML } from './chatml.js';

describe('renderChatML', () => {
  it('renders every role as <|im_start|>role\\ncontent<|im_end|>\\n, plus the generation prompt', () => {
    const msgs: ChatMLMessage[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U\nline' },
      { role: 'assistant', content: 'A' },
      { role: 'tool', content: '' },
    ];
    expect(renderChatML(msgs)).toBe('<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU\nline<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n<|im_start|>tool\n<|im_end|>\n');
    expect(renderChatML(msgs.slice(0, 1), true)).toBe('<|im_start|>system\nS<|im_end|>\n<|im_start|>assistant\n');
    expect(renderChatML([], true)).toBe('<|im_start|>assistant\n');
  });

  it('rejects an unknown role, naming the message', () => {
    expect(() => renderChatML([{ role: 'user', content: 'x' }, { role: 'function' as 'user', content: 'y' }])).toThrow(/message 1: unknown role 'function'/);
  });
});

describe('contextPrompt', () => {
  it('is system, user, then assistant + tool per step, then the generation prompt', () => {
    const step = { index: 0, callId: 'call_0', action: { tool: 't', params: {} }, thought: '', invalid: false, argumentsJson: '{}' };
    const r: RenderedContext = {
      system: 'sys',
      user: 'task',
      steps: [
        { ...step, assistantText: 'a0', result: 'r0' },
        { ...step, index: 1, callId: 'call_1', assistantText: 'a1', result: 'r1' },
      ],
    };
    expect(contextMessages(r).map((m) => `${m.role}:${m.content}`)).toEqual(['system:sys', 'user:task', 'assistant:a0', 'tool:r0', 'assistant:a1', 'tool:r1']);
    expect(contextPrompt(r)).toBe(renderChatML(contextMessages(r), true));
    expect(contextPrompt(r).endsWith('<|im_start|>tool\nr1<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
    // a model trained with system_prompt: drop sees the same prompt without the system message
    expect(contextPrompt(r, { system: 'drop' })).toBe(contextPrompt(r).slice(renderChatML([{ role: 'system', content: 'sys' }], false).length));
    expect(contextPrompt(r, { system: 'drop' }).startsWith('<|im_start|>user\ntask<|im_end|>\n')).toBe(true);
  });
});
