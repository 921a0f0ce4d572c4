import type { ConversationSteps } from './conversation.js';
import type { PathProblem } from './openai-messages.js';
import { describe } from './openai-messages.js';
import type { JsonObject } from './values.js';
import { contentText, isRecord, nonTextBlocks, str } from './values.js';
import { defined } from '../core/defined.js';

/**
 * Feeds Anthropic Messages content blocks into a {@link ConversationSteps}: shared by the Anthropic
 * cassette adapter (whole messages) and the Claude Code adapter (one block per log line).
 *
 * Assistant blocks: `text` → text, `thinking` → thinking (its `signature` kept in the
 * `metadata.thinkingSignatures` of the response's first step), `redacted_thinking` → `metadata.redactedThinking`, `tool_use` and
 * `server_tool_use` → tool calls (`name`, `input`). User blocks: `tool_result` → the observation of its
 * call (`is_error` → step error), `text` → a user message, anything else (images, documents) → metadata.
 */

/** Feeds the blocks of (part of) one assistant message; the caller opens and closes the message. */
export function feedAnthropicAssistantBlocks(
  conv: ConversationSteps,
  content: unknown,
  at: string,
  problems: PathProblem[],
  options: { startedAt?: string | undefined; callMetadata?: JsonObject } = {},
): void {
  if (typeof content === 'string') {
    conv.text(content);
    return;
  }
  if (!Array.isArray(content)) {
    problems.push({ path: at, message: `expected assistant content blocks, got ${describe(content)}; skipped`, severity: 'error' });
    return;
  }
  content.forEach((block, j) => {
    const bp = `${at}[${j}]`;
    if (!isRecord(block)) {
      problems.push({ path: bp, message: `expected a content block, got ${describe(block)}; skipped`, severity: 'error' });
      return;
    }
    switch (block.type) {
      case 'text':
        conv.text(str(block.text) ?? '');
        return;
      case 'thinking': {
        conv.thinking(str(block.thinking) ?? '');
        const signature = str(block.signature);
        if (signature) conv.messageNote('thinkingSignatures', signature);
        return;
      }
      case 'redacted_thinking':
        conv.messageNote('redactedThinking', block.data ?? true);
        return;
      case 'tool_use':
      case 'server_tool_use': {
        const name = str(block.name);
        if (!name) {
          problems.push({ path: `${bp}.name`, message: 'tool_use block has no name; skipped', severity: 'error' });
          return;
        }
        const params = isRecord(block.input) ? block.input : defined({ input: block.input });
        if (!isRecord(block.input) && block.input !== undefined) {
          problems.push({ path: `${bp}.input`, message: 'tool input is not an object; kept under params.input', severity: 'warning' });
        }
        const metadata: JsonObject = { ...(options.callMetadata ?? {}) };
        if (block.type === 'server_tool_use') metadata.serverTool = true;
        conv.toolCall({ id: str(block.id), tool: name, params, startedAt: options.startedAt, metadata });
        return;
      }
      default:
        conv.messageNote('assistantBlocks', block);
    }
  });
}

/**
 * Feeds one user message's content: tool results first (in block order), then its text as a user
 * message. `resultMetadata` goes to the step of the first tool result (Claude Code's `toolUseResult`).
 * Returns how many tool results it matched.
 */
export function feedAnthropicUserContent(
  conv: ConversationSteps,
  content: unknown,
  at: string,
  problems: PathProblem[],
  options: { endedAt?: string | undefined; resultMetadata?: JsonObject } = {},
): number {
  if (typeof content === 'string') {
    conv.user(content);
    return 0;
  }
  if (!Array.isArray(content)) {
    problems.push({ path: at, message: `expected user content, got ${describe(content)}; skipped`, severity: 'error' });
    return 0;
  }
  let results = 0;
  const texts: string[] = [];
  const attachments: unknown[] = [];
  content.forEach((block, j) => {
    if (!isRecord(block)) {
      if (typeof block === 'string') texts.push(block);
      return;
    }
    if (block.type === 'tool_result') {
      const metadata: JsonObject = results === 0 && options.resultMetadata ? { ...options.resultMetadata } : {};
      const extra = nonTextBlocks(block.content);
      if (extra.length > 0) metadata.observationAttachments = extra;
      const id = str(block.tool_use_id);
      const matched = conv.toolResult({
        id,
        observation: contentText(block.content),
        isError: block.is_error === true,
        endedAt: options.endedAt,
        metadata,
      });
      if (matched) results += 1;
      else {
        problems.push({
          path: `${at}[${j}]`,
          message: `tool_result for ${id ?? '(no id)'} answers no open tool_use; kept in metadata.unmatchedToolResults`,
          severity: 'warning',
        });
      }
    } else if (block.type === 'text') {
      texts.push(str(block.text) ?? '');
    } else {
      attachments.push(block);
    }
  });
  const text = texts.join('\n');
  if (text.trim() !== '') conv.user(text);
  if (attachments.length > 0) conv.note('userAttachments', attachments);
  return results;
}
