import { canonicalJson } from '../canonical.js';
import type { ToolSpec } from '../types.js';

/**
 * The text of gymflow's tool-calling chat format, shared by everything that writes a conversation: the
 * dataset exports (`src/hub/export/conversation.ts`), the policies that replay one to a model
 * (`src/policy/chat-format.ts`) and the learned reward model's step input (`src/reward/learned/step-input.ts`).
 * Rollouts and training data agree because they call these functions (docs/datasets.md, "Conversation
 * rendering"; the trainer's `gymflow_trainer.chat` renders the same text, `tests/chat-token-parity.test.ts`):
 *
 * - `system`: {@link systemPrompt} — what the agent is, the tools (one JSON object per line, OpenAI function
 *   shape) and the call format;
 * - an assistant turn: {@link assistantText} — the thought (if any), a blank line, then
 *   `<tool_call>\n{"name":"<tool>","arguments":<canonical JSON>}\n</tool_call>` ({@link toolCallText});
 * - the call's id in native tool APIs and in exported `tool_calls`: {@link callId}.
 */

/** Opening tag of a tool call in assistant text. */
export const TOOL_CALL_OPEN = '<tool_call>';
/** Closing tag of a tool call in assistant text. */
export const TOOL_CALL_CLOSE = '</tool_call>';

/** What the chat format needs of a tool. */
export type PromptTool = Pick<ToolSpec, 'name' | 'description' | 'parameters'>;

/** The OpenAI/TRL function shape of a tool. */
export function toolFunction(tool: PromptTool): { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } } {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/** The `tools` column of exported records: a JSON string of the tools in function shape. */
export function toolsJson(tools: readonly PromptTool[]): string {
  return JSON.stringify(tools.map(toolFunction));
}

/**
 * `<tool_call>\n{"name":…,"arguments":…}\n</tool_call>` for an action. `args` is `canonicalJson(params)` when the
 * caller has it already (export writes it into `tool_calls` too).
 */
export function toolCallText(tool: string, params: Record<string, unknown>, args: string = canonicalJson(params)): string {
  return `${TOOL_CALL_OPEN}\n{"name":${JSON.stringify(tool)},"arguments":${args}}\n${TOOL_CALL_CLOSE}`;
}

/**
 * An assistant turn in text form: the thought, a blank line, then the call — or the call alone when the
 * thought is empty. `thought` must already be trimmed (every renderer trims it the same way). `args`: as
 * {@link toolCallText}'s.
 */
export function assistantText(thought: string, tool: string, params: Record<string, unknown>, args?: string): string {
  const call = toolCallText(tool, params, args);
  return thought ? `${thought}\n\n${call}` : call;
}

/** The `call_<i>` id of step `i`, in exported `tool_calls` and in a policy's native tool calls. */
export function callId(index: number): string {
  return `call_${index}`;
}

/** The system prompt for an environment's tools. */
export function systemPrompt(envId: string, domain: string, tools: readonly PromptTool[]): string {
  const lines = tools.map((t) => JSON.stringify(toolFunction(t)));
  return [
    `You are an agent solving a task in the environment ${envId} (domain: ${domain}) by calling tools, one call per turn.`,
    '',
    '# Tools',
    '',
    ...lines,
    '',
    '# Format',
    '',
    'Think briefly, then call exactly one tool:',
    `${TOOL_CALL_OPEN}`,
    '{"name":"<tool name>","arguments":{...}}',
    `${TOOL_CALL_CLOSE}`,
    'The result comes back as a tool message. The episode ends when you submit your answer.',
  ].join('\n');
}
