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
 * A local policy renders its prompt with this (`contextPrompt` in `src/policy/chat-format.ts`), and the
 * benchmarks use it to build prompts, so it lives in core where every part may reach it.
 */

/** Opens a message. */
export const IM_START = '<|im_start|>';
/** Ends a message (the end-of-turn token a policy stops on). */
export const IM_END = '<|im_end|>';

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
