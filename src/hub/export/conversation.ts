import { canonicalJson } from '../../core/canonical.js';
import { assistantText, callId, systemPrompt, toolsJson } from '../../core/chat/prompt.js';
import { toolsFor, type ToolLookup } from '../../core/chat/tool-lookup.js';
import type { Trajectory } from '../../core/trajectory.js';
import type { ChatMessage, ToolCall, TrainMessage } from './schemas.js';

/**
 * Trajectory → chat conversation, the one rendering every export format shares (docs/datasets.md,
 * "Conversation rendering"), written with the chat format of `src/core/chat/prompt.ts` that the policies
 * use too:
 *
 * 1. `system`: what the agent is, the tools (one JSON object per line, OpenAI function shape) and the
 *    call format;
 * 2. `user`: the task instruction;
 * 3. per step `i`: an `assistant` message — the thought (if any), a blank line, then
 *    `<tool_call>\n{"name":"<tool>","arguments":<canonical JSON>}\n</tool_call>`, with the same call in
 *    `tool_calls` — followed by a `tool` message with the observation, **except after the last step**:
 *    nothing conditions on the final observation (the episode is over), and keeping it would put the
 *    environment's verdict ("Correct.") into preference and RL completions.
 */

/** A rendered trajectory: the shared prompt and the step turns. */
export interface Conversation {
  /** system + user. */
  prompt: TrainMessage[];
  /** assistant/tool turns. */
  turns: TrainMessage[];
  /** The `tools` column value. */
  tools: string;
}

function blank(role: TrainMessage['role'], content: string, train: boolean): TrainMessage {
  return { role, content, tool_calls: null, thought: null, name: null, tool_call_id: null, train, step_index: null, step_reward: null, env_reward: null };
}

/** Renders a trajectory (see the module comment). */
export function renderConversation(t: Trajectory, lookup: ToolLookup | undefined): Conversation {
  const tools = toolsFor(t, lookup);
  const prompt: TrainMessage[] = [blank('system', systemPrompt(t.envId, t.task.domain, tools), false), blank('user', t.task.instruction, false)];
  const turns: TrainMessage[] = [];
  t.steps.forEach((s, i) => {
    const args = canonicalJson(s.action.params);
    const call: ToolCall = { id: callId(s.index), type: 'function', function: { name: s.action.tool, arguments: args } };
    const thought = s.thought?.trim() ?? '';
    turns.push({
      role: 'assistant',
      content: assistantText(thought, s.action.tool, s.action.params, args),
      tool_calls: [call],
      thought,
      name: null,
      tool_call_id: null,
      train: s.error === undefined,
      step_index: s.index,
      step_reward: s.reward?.score ?? null,
      env_reward: s.envReward ?? null,
    });
    if (i < t.steps.length - 1) {
      turns.push({ ...blank('tool', s.observation, false), name: s.action.tool, tool_call_id: call.id, step_index: s.index });
    }
  });
  return { prompt, turns, tools: toolsJson(tools) };
}

/** A training message reduced to the plain chat fields (for DPO). */
export function toChatMessage(m: TrainMessage): ChatMessage {
  const out: ChatMessage = { role: m.role, content: m.content };
  if (m.tool_calls !== null) out.tool_calls = m.tool_calls;
  if (m.name !== null) out.name = m.name;
  if (m.tool_call_id !== null) out.tool_call_id = m.tool_call_id;
  return out;
}
