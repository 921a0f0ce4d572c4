import { describe, expect, it } from 'vitest';
import { toolCallText } from '../core/chat/prompt.js';
import { ToolValidator } from '../core/tool-validator.js';
import { INVALID_TOOL_CALL, invalidCallFeedback, parseAnthropicContent, parseOpenAIMessage, parseReActText, parseToolCallText, RAW_LIMIT } from './tool-call-parsing.js';

const ok = (tool: string, params: Record<string, unknown>, thought?: string): { action: { tool: string; params: Record<string, unknown> }; thought?: string } =>
  thought === undefined ? { action: { tool, params } } : { action: { tool, params }, thought };

describe('parseToolCallText', () => {
  const valid: [string, string, ReturnType<typeof ok>][] = [
    ['canonical', toolCallText('calculator', { expression: '1+2' }), ok('calculator', { expression: '1+2' })],
    ['thought before', 'I will add.\n\n<tool_call>\n{"name":"calculator","arguments":{"expression":"1"}}\n</tool_call>', ok('calculator', { expression: '1' }, 'I will add.')],
    ['no newlines', '<tool_call>{"name":"submit","arguments":{"answer":"x"}}</tool_call>', ok('submit', { answer: 'x' })],
    ['lots of whitespace', '  \n<tool_call>\n\n   {  "name" : "submit" ,\n "arguments" : { "answer" : 3 } }  \n\n</tool_call>\n ', ok('submit', { answer: 3 })],
    ['unclosed at end', 'hmm <tool_call>{"name":"submit","arguments":{}}', ok('submit', {}, 'hmm')],
    ['missing arguments', '<tool_call>{"name":"submit"}</tool_call>', ok('submit', {})],
    ['arguments as JSON string', '<tool_call>{"name":"submit","arguments":"{\\"answer\\":1}"}</tool_call>', ok('submit', { answer: 1 })],
    ['parameters alias', '<tool_call>{"name":"submit","parameters":{"answer":1}}</tool_call>', ok('submit', { answer: 1 })],
    ['code fence inside', '<tool_call>\n```json\n{"name":"submit","arguments":{}}\n```\n</tool_call>', ok('submit', {})],
    ['unicode and tags in strings', '<tool_call>{"name":"search","arguments":{"query":"é </tool_call"}}</tool_call>', ok('search', { query: 'é </tool_call' })],
    ['text after', '<tool_call>{"name":"submit","arguments":{}}</tool_call>\ndone', ok('submit', {}, 'done')],
  ];
  it.each(valid)('%s', (_name, text, expected) => {
    expect(parseToolCallText(text)).toEqual(expected);
  });

  const invalid: [string, string, RegExp][] = [
    ['empty', '', /no tool call found/],
    ['plain text', 'The answer is 4.', /no tool call found/],
    ['bad JSON', '<tool_call>{"name":"submit","arguments":{</tool_call>', /not valid JSON/],
    ['missing name', '<tool_call>{"arguments":{}}</tool_call>', /no "name"/],
    ['numeric name', '<tool_call>{"name":3}</tool_call>', /must be a string/],
    ['empty name', '<tool_call>{"name":"  "}</tool_call>', /empty/],
    ['array', '<tool_call>[1,2]</tool_call>', /must be a JSON object/],
    ['null', '<tool_call>null</tool_call>', /must be a JSON object/],
    ['arguments array', '<tool_call>{"name":"a","arguments":[1]}</tool_call>', /must be a JSON object, got an array/],
    ['arguments bad string', '<tool_call>{"name":"a","arguments":"{x"}</tool_call>', /not valid JSON/],
    ['empty body', '<tool_call>  </tool_call>', /empty/],
    ['two calls', '<tool_call>{"name":"a"}</tool_call><tool_call>{"name":"b"}</tool_call>', /2 tool calls found/],
    ['nested open', '<tool_call><tool_call>{"name":"a"}</tool_call>', /2 tool calls/],
    ['closing only', '</tool_call>', /no tool call found/],
  ];
  it.each(invalid)('invalid: %s', (_name, text, error) => {
    const parsed = parseToolCallText(text);
    expect(parsed.action.tool).toBe(INVALID_TOOL_CALL);
    expect(parsed.error).toMatch(error);
    expect(parsed.action.params).toEqual({ error: parsed.error, raw: text });
  });

  it('keeps the thought of an invalid call and truncates huge raw output', () => {
    const text = `thinking ${'x'.repeat(5000)}`;
    const parsed = parseToolCallText(text);
    expect(parsed.thought).toBe(text);
    expect((parsed.action.params.raw as string).length).toBe(RAW_LIMIT + 1);
  });

  it('the invalid-call action is rejected by the validator with the tools listed', () => {
    const v = new ToolValidator([{ name: 'submit', description: '', category: 'submit', parameters: { type: 'object' } }]);
    const err = v.check(parseToolCallText('nothing').action);
    expect(err).toMatchObject({ code: 'unknown_tool' });
    expect(err?.message).toMatch(/available tools: submit/);
  });

  it('invalidCallFeedback puts the parse error before the observation', () => {
    const { action } = parseToolCallText('nothing');
    expect(invalidCallFeedback(action, 'Error: unknown tool')).toMatch(/^Error: your tool call could not be parsed: no tool call found.*\nError: unknown tool$/s);
    expect(invalidCallFeedback({ tool: 'submit', params: {} }, 'obs')).toBe('obs');
  });
});

describe('parseOpenAIMessage', () => {
  const call = (name: unknown, args: unknown): { type: string; function: { name?: unknown; arguments?: unknown } } => ({ type: 'function', function: { name, arguments: args } });
  it.each([
    ['one call', { content: null, tool_calls: [call('calculator', '{"expression":"2*3"}')] }, ok('calculator', { expression: '2*3' })],
    ['content is thought', { content: 'Let me compute.', tool_calls: [call('calculator', '{}')] }, ok('calculator', {}, 'Let me compute.')],
    ['empty args', { content: '', tool_calls: [call('submit', '')] }, ok('submit', {})],
    ['text mode fallback', { content: toolCallText('submit', { answer: 1 }) }, ok('submit', { answer: 1 })],
  ])('%s', (_n, message, expected) => {
    expect(parseOpenAIMessage(message)).toEqual(expected);
  });
  it.each([
    ['bad JSON args', { tool_calls: [call('a', '{"x":')] }, /arguments are not valid JSON/],
    ['args not object', { tool_calls: [call('a', '"str"')] }, /must be a JSON object/],
    ['two calls', { tool_calls: [call('a', '{}'), call('b', '{}')] }, /2 tool calls/],
    ['no name', { tool_calls: [call(undefined, '{}')] }, /no "name"/],
    ['no function', { tool_calls: [{ type: 'function' }] }, /no function/],
    ['no call no text', { content: null, tool_calls: [] }, /no tool call found/],
    // Found by the fuzzer (tests/fuzz): a server that sends non-string content threw a TypeError.
    ['content not a string', { content: false as unknown as string }, /content must be a string or null, got boolean/],
    ['content an array', { content: [{ type: 'text', text: 'x' }] as unknown as string, tool_calls: [call('a', '{}')] }, /got an array/],
  ])('invalid: %s', (_n, message, error) => {
    const parsed = parseOpenAIMessage(message);
    expect(parsed.action.tool).toBe(INVALID_TOOL_CALL);
    expect(parsed.error).toMatch(error);
  });
});

describe('parseAnthropicContent', () => {
  it('tool_use with text and thinking as thought', () => {
    expect(
      parseAnthropicContent([
        { type: 'thinking', thinking: 'hmm' },
        { type: 'text', text: 'I will search.' },
        { type: 'tool_use', id: 't1', name: 'search', input: { query: 'x' } },
      ]),
    ).toEqual(ok('search', { query: 'x' }, 'hmm\n\nI will search.'));
  });
  it('text-only content falls back to the <tool_call> format', () => {
    expect(parseAnthropicContent([{ type: 'text', text: toolCallText('submit', { answer: 2 }) }])).toEqual(ok('submit', { answer: 2 }));
  });
  it('a text block whose text is not a string is no text, even an object without a prototype (found by the fuzz soak)', () => {
    const blocks = [{ type: 'text', text: Object.create(null) as unknown as string }, { type: 'text', text: toolCallText('submit', { answer: 2 }) }];
    expect(parseAnthropicContent(blocks)).toEqual(ok('submit', { answer: 2 }));
  });
  it.each([
    ['two tool_use', [{ type: 'tool_use', name: 'a', input: {} }, { type: 'tool_use', name: 'b', input: {} }], /2 tool calls/],
    ['input not object', [{ type: 'tool_use', name: 'a', input: [1] }], /must be a JSON object/],
    ['no name', [{ type: 'tool_use', input: {} }], /no "name"/],
    ['empty content', [], /no tool call found/],
    ['text without call', [{ type: 'text', text: 'The answer is 3' }], /no tool call found/],
  ])('invalid: %s', (_n, content, error) => {
    const parsed = parseAnthropicContent(content);
    expect(parsed.action.tool).toBe(INVALID_TOOL_CALL);
    expect(parsed.error).toMatch(error);
  });
});

describe('parseReActText', () => {
  it.each([
    ['full', 'Thought: I need the population.\nAction: lookup\nAction Input: {"name": "Paris"}', ok('lookup', { name: 'Paris' }, 'I need the population.')],
    ['no thought, no input', 'Action: submit', ok('submit', {})],
    ['multiline input and hallucinated observation', 'Action: search\nAction Input: {\n  "query": "a"\n}\nObservation: results', ok('search', { query: 'a' })],
    ['quoted name, fenced input', 'Thought: x\nAction: `calculator`\nAction Input: ```json\n{"expression":"1"}\n```', ok('calculator', { expression: '1' }, 'x')],
    ['falls back to <tool_call>', toolCallText('submit', {}), ok('submit', {})],
    // Found by the fuzzer (tests/fuzz): the space inside the quotes stayed in the tool name.
    ['space inside the quotes', 'Action: `calculator `', ok('calculator', {})],
  ])('%s', (_n, text, expected) => {
    expect(parseReActText(text)).toEqual(expected);
  });
  it.each([
    ['bad input JSON', 'Action: a\nAction Input: {oops}', /"Action Input" are not valid JSON/],
    ['empty action', 'Action:   \nAction Input: {}', /names no tool/],
    ['two actions', 'Action: a\nAction Input: {}\nAction: b', /2 actions/],
    ['input not object', 'Action: a\nAction Input: 42', /must be a JSON object/],
    ['nothing', 'I do not know.', /no tool call found/],
  ])('invalid: %s', (_n, text, error) => {
    const parsed = parseReActText(text);
    expect(parsed.action.tool).toBe(INVALID_TOOL_CALL);
    expect(parsed.error).toMatch(error);
  });
});
