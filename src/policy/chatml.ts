import type { RenderedContext } from './chat-format.js';

/**
 * ChatML text of a conversation, byte-identical to the trainer's `gymflow_trainer.chat.render`
 * (docs/trainer.md, "Chat template"): every message renders as
 *
 *     <|im_start|>{role}\n{content}<|im_end|>\n
 *
 * and the generation prompt is `<|im_start|>assistant\n`. No BOS, no default system prompt, no tool list
 * (the system message carries the tools). `tests/chat-token-parity.test.ts` renders the same
 * conversations here and in Python and compares text and token ids, so a change on either side fails.
 *
 * A local policy's prompt at step `k` is {@link contextMessages} of its context rendered with the
 * generation prompt: system, user, then per earlier step the assistant turn and the tool result — a prefix
 * of the text the SFT exporter's record of the same episode renders to, which is what SFT trained on.
 */

/** Opens a message. */
export const IM_START = '<|im_start|>';
/** Ends a message (the end-of-turn token a policy stops on). */
export const IM_END = '<|im_end|>';
/** Padding / end of text. */
export const END_OF_TEXT = '<|endoftext|>';
/** The special tokens of the chat format, as the trainer's tiny tokenizer defines them. */
export const CHATML_SPECIAL_TOKENS = [END_OF_TEXT, IM_START, IM_END] as const;

/** The roles the trainer's template accepts. */
export type ChatMLRole = 'system' | 'user' | 'assistant' | 'tool';

/** One message: role and text content (tool calls are already inside assistant content). */
export interface ChatMLMessage {
  role: ChatMLRole;
  content: string;
}

const ROLES: ReadonlySet<string> = new Set<ChatMLRole>(['system', 'user', 'assistant', 'tool']);

/**
 * Renders messages as ChatML (see the module comment). Throws `TypeError` for a role the template does not
 * know, naming the message index, as the Python side does.
 *
 * @example
 * renderChatML([{ role: 'user', content: 'hi' }], true);
 * // '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n'
 */
export function renderChatML(messages: readonly ChatMLMessage[], addGenerationPrompt = false): string {
  let out = '';
  messages.forEach((m, i) => {
    if (!ROLES.has(m.role)) throw new TypeError(`message ${i}: unknown role '${String(m.role)}' (known: system, user, assistant, tool)`);
    out += `${IM_START}${m.role}\n${m.content}${IM_END}\n`;
  });
  if (addGenerationPrompt) out += `${IM_START}assistant\n`;
  return out;
}

/**
 * The chat messages of a rendered context, in the order the exports write them: system, user, then per
 * step the assistant text and the tool result.
 */
export function contextMessages(r: RenderedContext, options: ContextOptions = {}): ChatMLMessage[] {
  const out: ChatMLMessage[] = [
    ...(options.system === 'drop' ? [] : [{ role: 'system' as const, content: r.system }]),
    { role: 'user', content: r.user },
  ];
  for (const s of r.steps) {
    out.push({ role: 'assistant', content: s.assistantText });
    out.push({ role: 'tool', content: s.result });
  }
  return out;
}

/** How a context becomes messages. */
export interface ContextOptions {
  /**
   * `drop` leaves the system message out: the prompt format of a model trained with the trainer's
   * `system_prompt: drop` (its `gymflow_policy.json` says so). Default `keep`.
   */
  system?: 'keep' | 'drop';
}

/** The prompt a local policy completes: the context's messages with the generation prompt. */
export function contextPrompt(r: RenderedContext, options: ContextOptions = {}): string {
  return renderChatML(contextMessages(r, options), true);
}
