import type { Trajectory } from '../../core/trajectory.js';
import { ExportError } from '../errors.js';
import type { ToolLookup } from '../../core/chat/tool-lookup.js';
import { renderConversation, toChatMessage } from './conversation.js';
import type { ChatMessage, DpoRecord } from './schemas.js';
import { trajectoryReward } from './select.js';
import { canonicalJson } from '../../core/canonical.js';

/**
 * DPO records from preference pairs. The pairing itself (which trajectories to compare) is the reward
 * layer's `buildPreferences` (src/reward/preferences.ts); the CLI builds pairs first and this module
 * only renders them.
 */

/** A preference pair of trajectories of one task. */
export interface TrajectoryPair {
  chosen: Trajectory;
  rejected: Trajectory;
}

/**
 * Turns id pairs (as `buildPreferences` returns them) back into trajectory pairs. Ids are looked up
 * within the pair's task (the first trajectory with that id wins); a pair naming an id absent from
 * `trajectories` is an error.
 */
export function resolvePairs(
  trajectories: readonly Trajectory[],
  pairs: readonly { chosenId: string; rejectedId: string; task?: { id: string } }[],
): TrajectoryPair[] {
  const byId = new Map<string, Trajectory>();
  for (const t of trajectories) {
    const key = `${t.task.id}\u0000${t.id}`;
    if (!byId.has(key)) byId.set(key, t);
    if (!byId.has(t.id)) byId.set(t.id, t);
  }
  const find = (id: string, task: string | undefined): Trajectory => {
    const t = (task === undefined ? undefined : byId.get(`${task}\u0000${id}`)) ?? byId.get(id);
    if (!t) throw new ExportError(`preference pair names trajectory ${id}, which is not in the input`);
    return t;
  };
  return pairs.map((p) => ({ chosen: find(p.chosenId, p.task?.id), rejected: find(p.rejectedId, p.task?.id) }));
}

function sameMessage(a: ChatMessage, b: ChatMessage): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * One DPO record: `prompt` is the longest common prefix of the two conversations that ends just
 * before an assistant message (at least system + user); `chosen` and `rejected` are the rest of each.
 * Returns `undefined` when the two conversations are identical (nothing to prefer).
 */
export function toDpoRecord(pair: TrajectoryPair, tools?: ToolLookup): DpoRecord | undefined {
  const a = renderConversation(pair.chosen, tools);
  const b = renderConversation(pair.rejected, tools);
  const ma = [...a.prompt, ...a.turns].map(toChatMessage);
  const mb = [...b.prompt, ...b.turns].map(toChatMessage);
  let d = 0;
  while (d < ma.length && d < mb.length && sameMessage(ma[d] as ChatMessage, mb[d] as ChatMessage)) d++;
  if (d === ma.length && d === mb.length) return undefined;
  // Back off to the assistant message where the policy's choices part (never into system/user).
  let cut = Math.min(d, ma.length - 1, mb.length - 1);
  while (cut > 2 && (ma[cut]?.role !== 'assistant' || mb[cut]?.role !== 'assistant')) cut--;
  cut = Math.max(cut, 2);
  const chosen = ma.slice(cut);
  const rejected = mb.slice(cut);
  if (chosen.length === 0 || rejected.length === 0) return undefined;
  const cr = trajectoryReward(pair.chosen);
  const rr = trajectoryReward(pair.rejected);
  return {
    prompt: ma.slice(0, cut),
    chosen,
    rejected,
    tools: a.tools,
    task_id: pair.chosen.task.id,
    env_id: pair.chosen.envId,
    chosen_id: pair.chosen.id,
    rejected_id: pair.rejected.id,
    chosen_reward: cr,
    rejected_reward: rr,
    margin: cr - rr,
  };
}
