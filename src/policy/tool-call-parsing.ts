import type { Action } from '../core/types.js';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from '../core/chat/prompt.js';

/**
 * Model output → {@link Action}. Four shapes are understood:
 *
 * - text with one `<tool_call>{"name":…,"arguments":{…}}</tool_call>` (the format of the system prompt
 *   and of exported training data); the text before the tag is the thought;
 * - OpenAI `tool_calls` (function name + arguments as a JSON string);
 * - Anthropic `tool_use` content blocks (name + input object);
 * - ReAct text: `Thought: …` / `Action: tool_name` / `Action Input: {json}`.
 *
 * Parsing never throws. A call that cannot be read — no call at all, bad JSON, a missing or non-string
 * name, arguments that are not an object, or more than one call (a step is exactly one action; taking
 * the first silently would hide the mistake) — becomes the **invalid-call action**
 * `{ tool: INVALID_TOOL_CALL, params: { error, raw } }`. The environment rejects it like any unknown
 * tool (`info.error.code = 'unknown_tool'`, an observation listing the available tools), and the
 * policies in this folder, when they replay the conversation, show the model `error` in front of that
 * observation (see {@link invalidCallFeedback}).
 */

/** Tool name of the invalid-call action (no environment registers a tool with this name). */
export const INVALID_TOOL_CALL = '__invalid_tool_call__';

/** Params of the invalid-call action. */
export interface InvalidCallParams {
  /** What was wrong, one line, addressed to the model. */
  error: string;
  /** The model output that could not be parsed (truncated to {@link RAW_LIMIT} characters). */
  raw: string;
}

/** At most this many characters of the raw output are kept in an invalid-call action. */
export const RAW_LIMIT = 2000;

/** A parse result: the action and the thought (text around the call), when any. */
export interface ParsedCall {
  action: Action;
  thought?: string;
  /** Set when `action` is the invalid-call action. */
  error?: string;
}

/** The invalid-call action for `error` and the raw output. */
export function invalidCall(error: string, raw: string): Action {
  const params: InvalidCallParams = { error, raw: raw.length > RAW_LIMIT ? `${raw.slice(0, RAW_LIMIT)}…` : raw };
  return { tool: INVALID_TOOL_CALL, params: { ...params } };
}

/** True for the invalid-call action. */
export function isInvalidCall(action: Action): boolean {
  return action.tool === INVALID_TOOL_CALL;
}

/**
 * The text a policy shows the model for a step whose action was the invalid-call action: the parse
 * error, then the environment's observation. For any other action, the observation unchanged.
 */
export function invalidCallFeedback(action: Action, observation: string): string {
  if (!isInvalidCall(action)) return observation;
  const error = typeof action.params.error === 'string' ? action.params.error : 'unreadable tool call';
  return `Error: your tool call could not be parsed: ${error}\n${observation}`;
}

function fail(error: string, raw: string, thought?: string): ParsedCall {
  const out: ParsedCall = { action: invalidCall(error, raw), error };
  if (thought) out.thought = thought;
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

type Checked = { ok: true; params: Record<string, unknown> } | { ok: false; error: string };

/** Arguments as a params object: an object, a JSON string of one, or absent/empty (→ `{}`). */
function checkArguments(args: unknown, what: string): Checked {
  if (args === undefined || args === null) return { ok: true, params: {} };
  if (typeof args === 'string') {
    if (args.trim() === '') return { ok: true, params: {} };
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch (err) {
      return { ok: false, error: `${what} are not valid JSON (${err instanceof Error ? err.message : String(err)})` };
    }
    if (!isRecord(parsed)) return { ok: false, error: `${what} must be a JSON object, got ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed}` };
    return { ok: true, params: parsed };
  }
  if (!isRecord(args)) return { ok: false, error: `${what} must be a JSON object, got ${Array.isArray(args) ? 'an array' : typeof args}` };
  return { ok: true, params: args };
}

function checkName(name: unknown): string | undefined {
  if (typeof name !== 'string') return name === undefined ? 'the tool call has no "name"' : '"name" must be a string';
  if (name.trim() === '') return '"name" is empty';
  return undefined;
}

/** One `{"name":…,"arguments":…}` JSON text → action (or the error). */
function parseCallJson(json: string): { ok: true; action: Action } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return { ok: false, error: `the tool call is not valid JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  if (!isRecord(value)) return { ok: false, error: 'the tool call must be a JSON object {"name": …, "arguments": {…}}' };
  const nameError = checkName(value.name);
  if (nameError) return { ok: false, error: nameError };
  const args = 'arguments' in value ? value.arguments : value.parameters;
  const checked = checkArguments(args, '"arguments"');
  if (!checked.ok) return checked;
  return { ok: true, action: { tool: (value.name as string).trim(), params: checked.params } };
}

/**
 * Parses text in the `<tool_call>` format. Whitespace and newlines inside the tags are tolerated, as is
 * a missing closing tag at the very end (generation stopped on it); a ```json fence inside is stripped.
 * Text before the first tag (and after the last) is the thought. No call, several calls or an
 * unreadable call give the invalid-call action.
 */
export function parseToolCallText(text: string): ParsedCall {
  const first = text.indexOf(TOOL_CALL_OPEN);
  if (first < 0) {
    const thought = text.trim();
    return fail(`no tool call found: answer with exactly one ${TOOL_CALL_OPEN}{"name": …, "arguments": {…}}${TOOL_CALL_CLOSE}`, text, thought || undefined);
  }
  const bodies: string[] = [];
  let pos = first;
  let end = text.length;
  while (pos >= 0) {
    const start = pos + TOOL_CALL_OPEN.length;
    const close = text.indexOf(TOOL_CALL_CLOSE, start);
    const next = text.indexOf(TOOL_CALL_OPEN, start);
    if (close < 0 || (next >= 0 && next < close)) {
      // unclosed: up to the next opening tag or the end
      bodies.push(text.slice(start, next >= 0 ? next : text.length));
      end = text.length;
      pos = next;
    } else {
      bodies.push(text.slice(start, close));
      end = close + TOOL_CALL_CLOSE.length;
      pos = next;
    }
  }
  const thought = [text.slice(0, first).trim(), text.slice(end).trim()].filter((s) => s !== '').join('\n\n');
  if (bodies.length > 1) return fail(`${bodies.length} tool calls found; call exactly one tool per turn`, text, thought || undefined);
  const body = stripFence((bodies[0] ?? '').trim());
  if (body === '') return fail('the tool call is empty', text, thought || undefined);
  const parsed = parseCallJson(body);
  if (!parsed.ok) return fail(parsed.error, text, thought || undefined);
  return thought ? { action: parsed.action, thought } : { action: parsed.action };
}

function stripFence(s: string): string {
  const m = /^```[a-zA-Z]*\s*\n?([\s\S]*?)\n?\s*```$/.exec(s);
  return m?.[1] !== undefined ? m[1].trim() : s;
}

/** An OpenAI `tool_calls` entry (only the fields read here). */
export interface OpenAIToolCallLike {
  type?: string;
  function?: { name?: unknown; arguments?: unknown };
}

/**
 * Parses an OpenAI assistant message: its `tool_calls` when present (exactly one function call is
 * expected), else its text content in the `<tool_call>` format. `content` is the thought.
 */
export function parseOpenAIMessage(message: { content?: string | null; tool_calls?: readonly OpenAIToolCallLike[] | null }): ParsedCall {
  // The SDK types the message but does not check it: an OpenAI-compatible server may send any JSON here.
  const given: unknown = message.content;
  if (given !== undefined && given !== null && typeof given !== 'string') {
    return fail(`the message content must be a string or null, got ${Array.isArray(given) ? 'an array' : typeof given}`, JSON.stringify(message) ?? String(given));
  }
  const content = message.content ?? '';
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return parseToolCallText(content);
  const thought = content.trim() || undefined;
  const raw = JSON.stringify({ content: message.content ?? null, tool_calls: calls });
  if (calls.length > 1) return fail(`${calls.length} tool calls found; call exactly one tool per turn`, raw, thought);
  const call = calls[0];
  if (!call || !isRecord(call.function)) return fail('the tool call has no function', raw, thought);
  const nameError = checkName(call.function.name);
  if (nameError) return fail(nameError, raw, thought);
  const checked = checkArguments(call.function.arguments, 'the arguments');
  if (!checked.ok) return fail(checked.error, raw, thought);
  const action: Action = { tool: (call.function.name as string).trim(), params: checked.params };
  return thought ? { action, thought } : { action };
}

/** An Anthropic content block (only the fields read here). */
export interface AnthropicBlockLike {
  type: string;
  text?: string;
  thinking?: string;
  name?: unknown;
  input?: unknown;
  id?: string;
}

/**
 * Parses Anthropic message content: exactly one `tool_use` block is expected; `text` and `thinking`
 * blocks are the thought. Without a `tool_use` block the text is parsed in the `<tool_call>` format (a
 * model may still write the call as text).
 */
export function parseAnthropicContent(content: readonly AnthropicBlockLike[]): ParsedCall {
  const texts: string[] = [];
  for (const b of content) {
    if (b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking.trim() !== '') texts.push(b.thinking.trim());
    if (b.type === 'text' && typeof b.text === 'string' && b.text.trim() !== '') texts.push(b.text.trim());
  }
  const thought = texts.join('\n\n') || undefined;
  const uses = content.filter((b) => b.type === 'tool_use');
  if (uses.length === 0) {
    const text = content
      .filter((b) => b.type === 'text')
      // Only string text: an SDK's block is typed, not checked (an object without a prototype threw out of the join).
      .map((b) => (typeof b.text === 'string' ? b.text : ''))
      .join('\n');
    const parsed = parseToolCallText(text);
    const thinking = content.filter((b) => b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking.trim() !== '').map((b) => (b.thinking ?? '').trim());
    const all = [...thinking, ...(parsed.thought !== undefined ? [parsed.thought] : [])].join('\n\n');
    if (all !== '') parsed.thought = all;
    return parsed;
  }
  const raw = JSON.stringify(content);
  if (uses.length > 1) return fail(`${uses.length} tool calls found; call exactly one tool per turn`, raw, thought);
  const use = uses[0] as AnthropicBlockLike;
  const nameError = checkName(use.name);
  if (nameError) return fail(nameError, raw, thought);
  const checked = checkArguments(use.input, 'the tool input');
  if (!checked.ok) return fail(checked.error, raw, thought);
  const action: Action = { tool: (use.name as string).trim(), params: checked.params };
  return thought ? { action, thought } : { action };
}

/**
 * Parses ReAct text: `Thought: …` (optional), `Action: tool_name`, `Action Input: {json}` (optional;
 * absent or empty means `{}`). Only the first `Action:` is read; a second `Action:` line is an error.
 * Text without `Action:` falls back to the `<tool_call>` format.
 */
export function parseReActText(text: string): ParsedCall {
  const actionRe = /^[ \t]*Action[ \t]*:[ \t]*(.*)$/gim;
  const matches = [...text.matchAll(actionRe)];
  if (matches.length === 0) return parseToolCallText(text);
  const before = text.slice(0, matches[0]?.index ?? 0);
  const thought = before.replace(/^[ \t]*Thought[ \t]*:[ \t]*/im, '').trim() || undefined;
  if (matches.length > 1) return fail(`${matches.length} actions found; give exactly one Action per turn`, text, thought);
  const m = matches[0] as RegExpMatchArray;
  // Trimmed again after the quotes go: "Action: `name `" names `name`, not "name ".
  const name = (m[1] ?? '').trim().replace(/^[`"']|[`"']$/g, '').trim();
  if (name === '') return fail('"Action:" names no tool', text, thought);
  const rest = text.slice((m.index ?? 0) + m[0].length);
  const input = /^[ \t]*\r?\n?[ \t]*Action[ \t]+Input[ \t]*:[ \t]*([\s\S]*)$/i.exec(rest);
  let args = (input?.[1] ?? '').trim();
  // Stop at a hallucinated observation.
  const obs = /\n[ \t]*Observation[ \t]*:/i.exec(args);
  if (obs) args = args.slice(0, obs.index).trim();
  const checked = checkArguments(stripFence(args), '"Action Input"');
  if (!checked.ok) return fail(checked.error, text, thought);
  const action: Action = { tool: name, params: checked.params };
  return thought ? { action, thought } : { action };
}
