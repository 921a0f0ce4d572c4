import { describe, expect, it } from 'vitest';
import { assistantText, callId, systemPrompt, toolCallText, toolFunction, toolsJson } from './prompt.js';

// The bytes below are the format the trainer tokenizes (gymflow_trainer.chat) and the exports write: a change
// here is a change of the training data, so it is pinned literally.

const calc = { name: 'calc', description: 'Evaluate.', parameters: { type: 'object', properties: { x: { type: 'string' } } } };

describe('chat prompt format', () => {
  it('writes a tool call with canonical arguments between the tags, each on its own line', () => {
    expect(toolCallText('calc', { z: 1, a: [true, null], 'é': '"' })).toBe('<tool_call>\n{"name":"calc","arguments":{"a":[true,null],"z":1,"é":"\\""}}\n</tool_call>');
  });

  it('puts the trimmed thought and a blank line before the call, or the call alone', () => {
    expect(assistantText('think', 'calc', {})).toBe('think\n\n<tool_call>\n{"name":"calc","arguments":{}}\n</tool_call>');
    expect(assistantText('', 'calc', {})).toBe(toolCallText('calc', {}));
  });

  it('names call ids after the step index', () => {
    expect(callId(0)).toBe('call_0');
    expect(callId(12)).toBe('call_12');
  });

  it('describes tools in the OpenAI function shape, one per system-prompt line', () => {
    expect(toolFunction({ ...calc, category: 'execute' } as typeof calc)).toEqual({ type: 'function', function: calc });
    expect(JSON.parse(toolsJson([calc]))).toEqual([{ type: 'function', function: calc }]);
    const lines = systemPrompt('gymflow/x-v0', 'math', [calc, { ...calc, name: 'other' }]).split('\n');
    expect(lines[0]).toBe('You are an agent solving a task in the environment gymflow/x-v0 (domain: math) by calling tools, one call per turn.');
    expect(lines.slice(1, 6)).toEqual(['', '# Tools', '', JSON.stringify(toolFunction(calc)), JSON.stringify(toolFunction({ ...calc, name: 'other' }))]);
    expect(lines.slice(-5)).toEqual([
      'Think briefly, then call exactly one tool:',
      '<tool_call>',
      '{"name":"<tool name>","arguments":{...}}',
      '</tool_call>',
      'The result comes back as a tool message. The episode ends when you submit your answer.',
    ]);
  });
});
