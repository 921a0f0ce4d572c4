import { describe, expect, it } from 'vitest';
import { type ChatMLMessage, renderChatML } from './chatml.js';

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
