import type { AgentContext } from '../core/agent.js';
import { canonicalJson } from '../core/canonical.js';
import { type ChatMLMessage, renderChatML } from '../core/chat/chatml.js';
import { assistantText, callId, systemPrompt } from '../core/chat/prompt.js';
import type { Action } from '../core/types.js';
import { invalidCallFeedback, isInvalidCall } from './tool-call-parsing.js';

/**
 * The conversation a policy sends, rebuilt from an {@link AgentContext} with the chat format the exports
 * use too (`src/core/chat/prompt.ts`), so rollouts and training data agree:
 *
 * - system: `systemPrompt(envId, domain, tools)` (tools one per line, the `<tool_call>` format);
 * - user: the task instruction;
 * - per earlier step `i`: the assistant turn (thought, a blank line, `toolCallText(tool, params)`; the
 *   same call with id `call_<i>` for native tool APIs) and the tool result (the observation).
 *
 * A local policy's prompt at step `k` is {@link contextPrompt}: {@link contextMessages} of its context as
 * ChatML with the generation prompt — a prefix of the text the SFT exporter's record of the same episode
 * renders to, which is what SFT trained on.
 *
 * One deliberate difference: for a step whose action was the invalid-call action (the model's output
 * could not be parsed, see `tool-call-parsing.ts`) the assistant turn replays what the model actually
 * wrote, and the tool result puts the parse error in front of the environment's observation. Exports
 * render such steps from the action (they are `train: false` there).
 */

/** What a policy remembers about its own step: the thought, and the raw output when it was unparsable. */
export interface StepNote {
  thought?: string;
  /** The model's raw output (text or serialised message), kept for invalid calls. */
  raw?: string;
}

/** One earlier step, ready to render. */
export interface RenderedStep {
  index: number;
  /** `call_<index>`, as in exports. */
  callId: string;
  action: Action;
  /** The thought of the step ('' when none). */
  thought: string;
  /** True when the action is the invalid-call action. */
  invalid: boolean;
  /** The assistant turn in text form (see the module comment). */
  assistantText: string;
  /** The tool result as the model sees it. */
  result: string;
  /** Canonical JSON of the params (the `arguments` of a native call). */
  argumentsJson: string;
}

/** The rendered context: system prompt, user message, earlier steps. */
export interface RenderedContext {
  system: string;
  user: string;
  steps: RenderedStep[];
}

/** Renders a context. `notes[i]` is what the policy remembered of step `i` (may be missing). */
export function renderContext(envId: string, ctx: AgentContext, notes: readonly (StepNote | undefined)[] = []): RenderedContext {
  const steps = ctx.history.map((h, i): RenderedStep => {
    const note = notes[i];
    const thought = note?.thought?.trim() ?? '';
    const invalid = isInvalidCall(h.action);
    const raw = note?.raw ?? (typeof h.action.params.raw === 'string' ? h.action.params.raw : '');
    return {
      index: i,
      callId: callId(i),
      action: h.action,
      thought,
      invalid,
      assistantText: invalid ? raw || thought || '(no output)' : assistantText(thought, h.action.tool, h.action.params),
      result: invalidCallFeedback(h.action, h.observation),
      argumentsJson: canonicalJson(h.action.params),
    };
  });
  return { system: systemPrompt(envId, ctx.task.domain, ctx.tools), user: ctx.task.instruction, steps };
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

/** The prompt a local policy completes: the context's messages as ChatML with the generation prompt. */
export function contextPrompt(r: RenderedContext, options: ContextOptions = {}): string {
  return renderChatML(contextMessages(r, options), true);
}
