import type { Trajectory } from '../../core/trajectory.js';
import type { ToolLookup } from '../../core/chat/tool-lookup.js';
import { renderConversation } from './conversation.js';
import type { SftRecord } from './schemas.js';
import { trajectoryReward } from './select.js';

/**
 * One SFT record (TRL conversational language-modeling type: `messages`) per trajectory; see
 * `conversation.ts` for the rendering and `schemas.ts` for every field.
 */
export function toSftRecord(t: Trajectory, tools?: ToolLookup): SftRecord {
  const c = renderConversation(t, tools);
  return {
    messages: [...c.prompt, ...c.turns],
    tools: c.tools,
    trajectory_id: t.id,
    task_id: t.task.id,
    env_id: t.envId,
    domain: t.task.domain,
    agent: t.agent.name,
    success: t.outcome.success,
    reward: trajectoryReward(t),
    num_steps: t.steps.length,
    outcome_reason: t.outcome.reason,
  };
}
