import type { Trajectory } from '../../core/trajectory.js';

/**
 * Asynchronous RL's bound on staleness (docs/pipeline.md, "Asynchronous RL"): a trajectory whose steps were chosen
 * by a policy more than `maxStaleness` versions older than the one the training updates is either dropped from the
 * batch or makes the whole batch refused.
 */

/** The rule the export applies: the version the training starts from, the bound, and what to do past it. */
export interface StalenessRule {
  /** The policy version the training updates (the loop iteration whose checkpoint it starts from). */
  policyVersion: number;
  /** How many versions older than `policyVersion` a step's policy may be. */
  maxStaleness: number;
  /** `drop`: leave the stale trajectories out; `fail`: refuse the batch. */
  onStale: 'drop' | 'fail';
}

/**
 * The oldest policy version among the steps of `t` (`steps[].policyVersion`), or undefined when no step records one
 * (an expert's or any agent that is not a loop's policy: it is never stale).
 */
export function behaviourVersion(t: Trajectory): number | undefined {
  let oldest: number | undefined;
  for (const s of t.steps) if (s.policyVersion !== undefined && (oldest === undefined || s.policyVersion < oldest)) oldest = s.policyVersion;
  return oldest;
}

/** How many versions behind `policyVersion` the oldest step of `t` is (0 when it records none or is newer). */
export function stalenessOf(t: Trajectory, policyVersion: number): number {
  const v = behaviourVersion(t);
  return v === undefined ? 0 : Math.max(0, policyVersion - v);
}

/** What {@link splitByStaleness} found. */
export interface StalenessSplit {
  /** Trajectories within the bound, in input order. */
  fresh: Trajectory[];
  /** Trajectories past it, in input order. */
  stale: Trajectory[];
  /** The largest staleness seen (0 for a batch of the current policy or of agents without versions). */
  maxSeen: number;
  /** The oldest policy version of the stale trajectories, when there are some. */
  oldestStale?: number;
}

/** Splits a batch by `rule`'s bound (the rule's `onStale` is for the caller to apply). */
export function splitByStaleness(ts: readonly Trajectory[], rule: Pick<StalenessRule, 'policyVersion' | 'maxStaleness'>): StalenessSplit {
  const out: StalenessSplit = { fresh: [], stale: [], maxSeen: 0 };
  for (const t of ts) {
    const s = stalenessOf(t, rule.policyVersion);
    out.maxSeen = Math.max(out.maxSeen, s);
    if (s > rule.maxStaleness) {
      out.stale.push(t);
      const v = behaviourVersion(t) as number;
      if (out.oldestStale === undefined || v < out.oldestStale) out.oldestStale = v;
    } else out.fresh.push(t);
  }
  return out;
}
