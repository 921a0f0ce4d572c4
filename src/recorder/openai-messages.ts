import type { ConversationSteps } from './conversation.js';
import type { JsonObject } from './values.js';
import { contentText, isRecord, nonTextBlocks, parseToolArguments, str } from './values.js';

/**
 * Feeds a list of OpenAI chat-completions messages into a {@link ConversationSteps}. Used by every
 * adapter whose log is OpenAI-shaped: SWE-agent `history`, mini-swe-agent 1.1, verifiers rollouts and
 * OpenAI cassettes.
 *
 * Tolerated variants: `tool_calls[]` elements that are JSON-encoded strings (verifiers), tool messages
 * without `tool_call_id` (paired by order) or with SWE-agent's `tool_call_ids[]`, `reasoning_content` on
 * assistant messages (DeepSeek), and legacy `function_call`.
 */

/** A problem found while feeding, located by JSON path; the adapter adds file and line. */
export interface PathProblem {
  path: string;
  message: string;
  severity: 'error' | 'warning';
}

/** Per-adapter hooks: extra details for the step(s) a message produces. */
export interface OpenAiFeedOptions {
  /** JSON path of the message list, for problem reports (`$.messages`). */
  path: string;
  /** Start time and metadata for the steps of an assistant message. */
  assistantInfo?: (message: JsonObject, index: number) => { startedAt?: string | undefined; metadata?: JsonObject };
  /** End time and metadata for the step a tool message answers. */
  toolInfo?: (message: JsonObject, index: number) => { endedAt?: string | undefined; metadata?: JsonObject; isError?: boolean };
  /** Handles roles other than system/developer/user/assistant/tool; returns false to report them. */
  otherRole?: (message: JsonObject, index: number) => boolean;
}

/** What feeding found besides steps. */
export interface OpenAiFeedResult {
  /** System/developer messages before the first step, in order. */
  systemPrompts: string[];
  problems: PathProblem[];
}

/** Feeds `messages` into `conv`. */
export function feedOpenAiMessages(conv: ConversationSteps, messages: readonly unknown[], options: OpenAiFeedOptions): OpenAiFeedResult {
  const result: OpenAiFeedResult = { systemPrompts: [], problems: [] };
  messages.forEach((raw, index) => {
    const at = `${options.path}[${index}]`;
    if (!isRecord(raw)) {
      result.problems.push({ path: at, message: `expected a message object, got ${describe(raw)}; skipped`, severity: 'error' });
      return;
    }
    const role = str(raw.role);
    switch (role) {
      case 'system':
      case 'developer': {
        const text = contentText(raw.content);
        if (conv.steps.length === 0) result.systemPrompts.push(text);
        else conv.note('systemMessages', text);
        return;
      }
      case 'user': {
        conv.user(contentText(raw.content));
        const attachments = nonTextBlocks(raw.content);
        if (attachments.length > 0) conv.note('userAttachments', attachments);
        return;
      }
      case 'assistant': {
        feedAssistant(conv, raw, index, at, options, result.problems);
        return;
      }
      case 'tool':
      case 'function': {
        const ids = Array.isArray(raw.tool_call_ids) ? raw.tool_call_ids : [];
        const id = str(raw.tool_call_id) ?? str(ids[0]);
        const info = options.toolInfo?.(raw, index) ?? {};
        const matched = conv.toolResult({
          id,
          observation: contentText(raw.content),
          endedAt: info.endedAt,
          metadata: info.metadata ?? {},
          isError: info.isError ?? false,
        });
        if (!matched) {
          result.problems.push({
            path: at,
            message: `tool message${id ? ` for call ${id}` : ''} answers no open tool call; kept in metadata.unmatchedToolResults`,
            severity: 'warning',
          });
        }
        return;
      }
      default: {
        if (options.otherRole?.(raw, index)) return;
        conv.note('otherMessages', raw);
        result.problems.push({ path: `${at}.role`, message: `unknown role ${JSON.stringify(role)}; message kept in metadata.otherMessages`, severity: 'warning' });
      }
    }
  });
  return result;
}

function feedAssistant(
  conv: ConversationSteps,
  message: JsonObject,
  index: number,
  at: string,
  options: OpenAiFeedOptions,
  problems: PathProblem[],
): void {
  const info = options.assistantInfo?.(message, index) ?? {};
  const extraFields: JsonObject = {};
  for (const [k, v] of Object.entries(message)) if (v !== null && v !== undefined && !ASSISTANT_FIELDS.has(k)) extraFields[k] = v;
  const metadata: JsonObject = { ...(info.metadata ?? {}) };
  if (Object.keys(extraFields).length > 0) metadata.messageFields = extraFields;
  conv.assistant(str(message.id) ?? `${options.path}[${index}]`, { startedAt: info.startedAt, metadata });
  const reasoning = str(message.reasoning_content) ?? str(message.reasoning);
  if (reasoning) conv.thinking(reasoning);
  const text = contentText(message.content);
  if (text) conv.text(text);
  const calls: unknown[] = Array.isArray(message.tool_calls) ? [...message.tool_calls] : [];
  if (calls.length === 0 && isRecord(message.function_call)) calls.push({ function: message.function_call });
  calls.forEach((rawCall, j) => {
    const callPath = `${at}.tool_calls[${j}]`;
    let call: unknown = rawCall;
    if (typeof rawCall === 'string') {
      try {
        call = JSON.parse(rawCall) as unknown;
      } catch (err) {
        problems.push({ path: callPath, message: `tool call is a string that is not JSON (${(err as Error).message}); skipped`, severity: 'error' });
        return;
      }
    }
    if (!isRecord(call)) {
      problems.push({ path: callPath, message: `expected a tool call object, got ${describe(call)}; skipped`, severity: 'error' });
      return;
    }
    const fn = isRecord(call.function) ? call.function : {};
    const name = str(fn.name) ?? str(call.name);
    if (!name) {
      problems.push({ path: `${callPath}.function.name`, message: 'tool call has no function name; skipped', severity: 'error' });
      return;
    }
    const args = parseToolArguments(fn.arguments ?? call.arguments);
    if (args.warning) problems.push({ path: `${callPath}.function.arguments`, message: args.warning, severity: 'warning' });
    const metadata: JsonObject = {};
    if (typeof rawCall === 'string') metadata.toolCallEncoding = 'json-string';
    conv.toolCall({ id: str(call.id), tool: name, params: args.params, metadata });
  });
  conv.endAssistant();
}

/**
 * Assistant-message fields that are mapped (or duplicate what is mapped) and so are not copied into
 * `metadata.messageFields`: `provider_specific_fields` repeats `reasoning_content` (LiteLLM), SWE-agent's
 * `thought`/`action` repeat `content` and the call, and `extra` is read by the adapters that know it.
 */
const ASSISTANT_FIELDS = new Set([
  'role', 'content', 'tool_calls', 'function_call', 'reasoning_content', 'reasoning', 'id', 'extra',
  'provider_specific_fields', 'thought', 'action', 'agent', 'message_type',
]);

/** A short description of a JSON value's type, for messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)?.slice(0, 40)}`;
}
