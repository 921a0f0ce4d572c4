import { canonicalJson } from '../../core/canonical.js';
import type { Trajectory, TrajectoryStep } from '../../core/trajectory.js';
import { listEnvs, make } from '../../core/registry.js';
import type { ToolSpec } from '../../core/types.js';
import type { ChatMessage, ToolCall, TrainMessage } from './schemas.js';

/**
 * Trajectory → chat conversation, the one rendering every export format shares (docs/datasets.md,
 * "Conversation rendering"):
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

/** Opening tag of a tool call in assistant text. */
export const TOOL_CALL_OPEN = '<tool_call>';
/** Closing tag of a tool call in assistant text. */
export const TOOL_CALL_CLOSE = '</tool_call>';

/** The OpenAI/TRL function shape of a tool. */
export function toolFunction(tool: Pick<ToolSpec, 'name' | 'description' | 'parameters'>): { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } } {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/** The `tools` column: a JSON string of the tools in function shape. */
export function toolsJson(tools: readonly Pick<ToolSpec, 'name' | 'description' | 'parameters'>[]): string {
  return JSON.stringify(tools.map(toolFunction));
}

/** `<tool_call>\n{"name":…,"arguments":…}\n</tool_call>` for an action. */
export function toolCallText(tool: string, params: Record<string, unknown>): string {
  return `${TOOL_CALL_OPEN}\n{"name":${JSON.stringify(tool)},"arguments":${canonicalJson(params)}}\n${TOOL_CALL_CLOSE}`;
}

/** The system prompt for an environment's tools. */
export function systemPrompt(envId: string, domain: string, tools: readonly Pick<ToolSpec, 'name' | 'description' | 'parameters'>[]): string {
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

/**
 * The tools to describe for a trajectory: `lookup(envId)` (the registered env's tools) when it knows
 * the env, else one schemaless entry per tool name the trajectory used.
 */
export function toolsFor(t: Trajectory, lookup: ToolLookup | undefined): readonly Pick<ToolSpec, 'name' | 'description' | 'parameters'>[] {
  const known = lookup?.(t.envId);
  if (known) return known;
  const names = [...new Set(t.steps.map((s) => s.action.tool))];
  return names.map((name) => ({ name, description: '', parameters: { type: 'object' } }));
}

/** Finds an environment's tools by id (`undefined` when unknown). */
export type ToolLookup = (envId: string) => readonly ToolSpec[] | undefined;

/**
 * A {@link ToolLookup} backed by the environment registry: the tools of a registered env (built once
 * with `make`, then closed), `undefined` for an id that is not registered.
 */
export function registryToolLookup(): ToolLookup {
  const cache = new Map<string, readonly ToolSpec[] | undefined>();
  return (envId) => {
    if (!cache.has(envId)) {
      let tools: readonly ToolSpec[] | undefined;
      if (listEnvs().some((s) => s.id === envId)) {
        const env = make(envId);
        tools = env.tools;
        // close() is idempotent and cheap before reset; nothing to wait for.
        void env.close().catch(() => undefined);
      }
      cache.set(envId, tools);
    }
    return cache.get(envId);
  };
}

/** A rendered trajectory: the shared prompt and the step turns. */
export interface Conversation {
  /** system + user. */
  prompt: TrainMessage[];
  /** assistant/tool turns. */
  turns: TrainMessage[];
  /** The `tools` column value. */
  tools: string;
}

function callId(step: TrajectoryStep): string {
  return `call_${step.index}`;
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
    const call: ToolCall = { id: callId(s), type: 'function', function: { name: s.action.tool, arguments: canonicalJson(s.action.params) } };
    const thought = s.thought?.trim() ?? '';
    const text = toolCallText(s.action.tool, s.action.params);
    turns.push({
      role: 'assistant',
      content: thought ? `${thought}\n\n${text}` : text,
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
