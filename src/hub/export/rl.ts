import type { Trajectory } from '../../core/trajectory.js';
import type { ToolLookup } from '../../core/chat/tool-lookup.js';
import { renderConversation } from './conversation.js';
import type { RlMember, RlRecord } from './schemas.js';
import { trajectoryReward } from './select.js';

/**
 * RL records: the trajectories of each task (same env and task id) as one group, in first-seen task
 * order, members in input order. `prompt` is the first member's system + user messages (every member
 * of a task shares them).
 */

/** Groups trajectories by (env id, task id), keeping first-seen order. */
export function groupByTask(ts: readonly Trajectory[]): Trajectory[][] {
  const groups = new Map<string, Trajectory[]>();
  for (const t of ts) {
    const key = `${t.envId}\u0000${t.task.id}`;
    const g = groups.get(key);
    if (g) g.push(t);
    else groups.set(key, [t]);
  }
  return [...groups.values()];
}

/** Mean and population standard deviation. */
export function meanStd(xs: readonly number[]): { mean: number; std: number } {
  if (xs.length === 0) return { mean: 0, std: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const std = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  return { mean, std };
}

/** One RL record for a group of trajectories of one task. */
export function toRlRecord(group: readonly Trajectory[], tools?: ToolLookup): RlRecord {
  const first = group[0] as Trajectory;
  const rewards = group.map(trajectoryReward);
  const { mean, std } = meanStd(rewards);
  const members: RlMember[] = group.map((t, i) => {
    const c = renderConversation(t, tools);
    const hasTokens = t.steps.some((s) => s.tokens !== undefined);
    const hasLogprobs = t.steps.some((s) => s.logprobs !== undefined);
    const scored = t.steps.some((s) => s.reward !== undefined);
    const seed = (t.metadata.collect as { seed?: unknown } | undefined)?.seed;
    const r = rewards[i] as number;
    return {
      trajectory_id: t.id,
      completion: c.turns,
      reward: r,
      advantage: std > 1e-12 ? (r - mean) / std : 0,
      success: t.outcome.success,
      num_steps: t.steps.length,
      step_rewards: scored ? t.steps.map((s) => s.reward?.score ?? null) : null,
      env_rewards: t.steps.map((s) => s.envReward ?? 0),
      tokens: hasTokens ? t.steps.map((s) => ({ prompt: s.tokens?.prompt ?? null, completion: s.tokens?.completion ?? null })) : null,
      logprobs: hasLogprobs ? t.steps.map((s) => s.logprobs ?? null) : null,
      seed: typeof seed === 'number' && Number.isInteger(seed) ? seed : null,
      ...(t.steps.some((s) => s.policyVersion !== undefined) ? { policy_versions: t.steps.map((s) => s.policyVersion ?? null) } : {}),
    };
  });
  const c0 = renderConversation(first, tools);
  return {
    task_id: first.task.id,
    env_id: first.envId,
    domain: first.task.domain,
    prompt: c0.prompt,
    tools: c0.tools,
    group: members,
    group_size: members.length,
    reward_mean: mean,
    reward_std: std,
  };
}
