import { renderChatML } from '../../core/chat/chatml.js';
import { assistantText } from '../../core/chat/prompt.js';
import type { Tokenizer } from '../../core/tokenizer.js';
import type { Trajectory } from '../../core/trajectory.js';

/**
 * The step input of the learned reward model: what the model reads to score step `i` of a trajectory
 * (docs/reward.md, "Learned reward model"). The trainer builds the same text and ids in
 * `gymflow_trainer/rm.py` (`render_step`, `encode_step`); `step-input.test.ts` checks both agree, text and
 * token ids, on real trajectories.
 *
 * ChatML (`<|im_start|>{role}\n{content}<|im_end|>\n` per message) of
 * - head: a `user` message with the task instruction;
 * - tail: for every step `j ≤ i` an `assistant` message — the trimmed thought, a blank line, then
 *   `<tool_call>\n{"name":…,"arguments":<canonical JSON>}\n</tool_call>` (`assistantText` of
 *   `src/core/chat/prompt.ts`, as exports render it) — and a
 *   `tool` message with the step's observation (step `i`'s own result included).
 *
 * No system prompt (the tool list needs the environment registry; the trainer has none). Ids are the head
 * and every tail message encoded on their own and concatenated; longer than `maxLength` they are cut by
 * {@link truncateIds}, which keeps the instruction and the most recent steps.
 */

/** The rendering's name; the exported model records it and the scorer refuses another. */
export const STEP_INPUT_FORMAT = 'gymflow-step-v1';

/** One ChatML message of a step input. */
export interface StepInputMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
}

/** `<|im_start|>{role}\n{content}<|im_end|>\n`: one message, each encoded on its own. */
export function chatMLMessage(m: StepInputMessage): string {
  return renderChatML([m]);
}

/** The assistant and tool messages of one step. */
export function stepTurns(step: Trajectory['steps'][number]): [StepInputMessage, StepInputMessage] {
  return [
    { role: 'assistant', content: assistantText(step.thought?.trim() ?? '', step.action.tool, step.action.params) },
    { role: 'tool', content: step.observation },
  ];
}

/** The step input's text of the step at `position` (0-based): the head and the tail messages, rendered. */
export function renderStepInput(t: Trajectory, position: number): { head: string; tail: string[] } {
  if (!Number.isInteger(position) || position < 0 || position >= t.steps.length) {
    throw new RangeError(`renderStepInput: position ${position} is not a step of trajectory ${t.id} (${t.steps.length} steps)`);
  }
  const tail: string[] = [];
  for (const s of t.steps.slice(0, position + 1)) for (const m of stepTurns(s)) tail.push(chatMLMessage(m));
  return { head: chatMLMessage({ role: 'user', content: t.task.instruction }), tail };
}

/**
 * Left truncation that keeps the instruction: `head + tail` when it fits in `maxLength`; otherwise the first
 * `h = min(head.length, floor(maxLength / 2))` head ids and the last `maxLength − h` tail ids.
 */
export function truncateIds(head: readonly number[], tail: readonly number[], maxLength: number): number[] {
  if (head.length + tail.length <= maxLength) return [...head, ...tail];
  const h = Math.min(head.length, Math.floor(maxLength / 2));
  return [...head.slice(0, h), ...tail.slice(tail.length - (maxLength - h))];
}

/**
 * The token ids of every step's input, encoding each message once (`O(total text)` tokenizer work).
 *
 * @example
 * ```ts
 * const rows = encodeStepInputs(await loadTokenizer(dir), trajectory, 1024); // rows[i]: step i's ids
 * ```
 */
export function encodeStepInputs(tokenizer: Tokenizer, t: Trajectory, maxLength: number): number[][] {
  if (!Number.isInteger(maxLength) || maxLength < 2) throw new RangeError(`encodeStepInputs: maxLength must be an integer >= 2, got ${maxLength}`);
  const head = tokenizer.encode(chatMLMessage({ role: 'user', content: t.task.instruction }));
  const tail: number[] = [];
  const rows: number[][] = [];
  for (const s of t.steps) {
    for (const m of stepTurns(s)) tail.push(...tokenizer.encode(chatMLMessage(m)));
    rows.push(truncateIds(head, tail, maxLength));
  }
  return rows;
}
