import { canonicalJson } from '../../core/canonical.js';
import type { Trajectory } from '../../core/trajectory.js';
import { selectTop } from './ranking.js';
import { groupByTask } from './rl.js';
import type { BenchmarkRecord } from './schemas.js';
import { trajectoryReward } from './select.js';

/**
 * Benchmark records: one per task that has at least one successful trajectory, with the best
 * successful one (highest quality, see `ranking.ts`) as the reference solution. Tasks without a
 * success are left out and counted by the caller.
 */
export function toBenchmarkRecord(group: readonly Trajectory[]): BenchmarkRecord | undefined {
  const successes = group.filter((t) => t.outcome.success);
  const best = selectTop(successes, 1)[0]?.trajectory;
  if (!best) return undefined;
  return {
    task_id: best.task.id,
    env_id: best.envId,
    domain: best.task.domain,
    instruction: best.task.instruction,
    task_split: best.task.split ?? null,
    metadata: JSON.stringify(best.task.metadata ?? {}),
    reference: {
      trajectory_id: best.id,
      agent: best.agent.name,
      actions: best.steps.map((s) => ({ tool: s.action.tool, arguments: canonicalJson(s.action.params) })),
      num_steps: best.steps.length,
      reward: trajectoryReward(best),
    },
    attempts: group.length,
    successes: successes.length,
    success_rate: successes.length / group.length,
  };
}

/** Benchmark records for every task with a success, in first-seen task order. */
export function toBenchmarkRecords(ts: readonly Trajectory[]): { records: BenchmarkRecord[]; unsolved: number } {
  const records: BenchmarkRecord[] = [];
  let unsolved = 0;
  for (const g of groupByTask(ts)) {
    const r = toBenchmarkRecord(g);
    if (r) records.push(r);
    else unsolved++;
  }
  return { records, unsolved };
}
