import type { Trajectory } from '../core/trajectory.js';

/**
 * Preference pairs (chosen, rejected) for DPO-style training, built from scored trajectories.
 *
 * The pairing rule:
 * 1. Group trajectories by task (`task.domain` + `task.id`); trajectories of different tasks are never
 *    paired. A trajectory id seen twice in a group counts once (the first occurrence).
 * 2. A trajectory's score is `reward.total`, or `outcome.score` when it has no reward summary.
 * 3. Every two trajectories of a group whose scores differ by at least `minMargin` form a candidate,
 *    the higher-scored one chosen. Ties (margin ≤ 1e-9) are always dropped, even with `minMargin: 0`.
 *    Margins are compared with a 1e-9 tolerance so 0.3 − 0.2 counts as a margin of 0.1.
 * 4. With `maxPairsPerTask`, a group keeps its candidates with the **largest margins** (the clearest
 *    preferences); equal margins are broken by chosen id, then rejected id (ascending), so the result
 *    does not depend on input order.
 * Pairs come out grouped by task (tasks in first-seen order), each group in that same order.
 */

/** Options of {@link buildPreferences}. */
export interface PreferenceOptions {
  /** Smallest score difference that makes a pair (default 0.1). */
  minMargin?: number;
  /** At most this many pairs per task (default: no cap). */
  maxPairsPerTask?: number;
}

/** One preference pair. */
export interface PreferencePair {
  task: { id: string; domain: string };
  chosenId: string;
  rejectedId: string;
  chosenScore: number;
  rejectedScore: number;
  /** chosenScore − rejectedScore (> 0). */
  margin: number;
}

/** What the pairing kept and dropped. */
export interface PreferenceStats {
  trajectories: number;
  tasks: number;
  /** Tasks with a single (distinct) trajectory: nothing to pair. */
  singletonTasks: number;
  /** Trajectory ids seen more than once within a task, counted once. */
  duplicates: number;
  /** Unordered pairs considered (same task, distinct trajectories). */
  considered: number;
  droppedTies: number;
  droppedBelowMargin: number;
  droppedByCap: number;
  pairs: number;
}

/** Result of {@link buildPreferences}. */
export interface PreferenceSet {
  pairs: PreferencePair[];
  stats: PreferenceStats;
}

const TIE_EPS = 1e-9;

/** The score preferences rank by: `reward.total`, else `outcome.score`. */
export function preferenceScore(t: Trajectory): number {
  return t.reward?.total ?? t.outcome.score;
}

/**
 * Builds (chosen, rejected) pairs from scored trajectories; see the module comment for the rule.
 *
 * @example
 * ```ts
 * const { pairs, stats } = buildPreferences(scored, { minMargin: 0.2, maxPairsPerTask: 4 });
 * ```
 */
export function buildPreferences(trajectories: Iterable<Trajectory>, options: PreferenceOptions = {}): PreferenceSet {
  const minMargin = options.minMargin ?? 0.1;
  const cap = options.maxPairsPerTask;
  if (!(minMargin >= 0) || !Number.isFinite(minMargin)) throw new RangeError(`buildPreferences: minMargin must be a finite number >= 0, got ${minMargin}`);
  if (cap !== undefined && !(Number.isInteger(cap) && cap >= 0)) throw new RangeError(`buildPreferences: maxPairsPerTask must be a non-negative integer, got ${cap}`);

  const groups = new Map<string, { task: { id: string; domain: string }; members: Map<string, number> }>();
  const stats: PreferenceStats = {
    trajectories: 0,
    tasks: 0,
    singletonTasks: 0,
    duplicates: 0,
    considered: 0,
    droppedTies: 0,
    droppedBelowMargin: 0,
    droppedByCap: 0,
    pairs: 0,
  };
  for (const t of trajectories) {
    stats.trajectories++;
    const key = `${t.task.domain}\u0000${t.task.id}`;
    let g = groups.get(key);
    if (!g) {
      g = { task: { id: t.task.id, domain: t.task.domain }, members: new Map() };
      groups.set(key, g);
    }
    if (g.members.has(t.id)) stats.duplicates++;
    else g.members.set(t.id, preferenceScore(t));
  }

  const pairs: PreferencePair[] = [];
  for (const g of groups.values()) {
    stats.tasks++;
    const members = [...g.members.entries()];
    if (members.length < 2) stats.singletonTasks++;
    const candidates: PreferencePair[] = [];
    for (let i = 0; i < members.length; i++) {
      for (let j = i + 1; j < members.length; j++) {
        stats.considered++;
        const [idA, sA] = members[i] as [string, number];
        const [idB, sB] = members[j] as [string, number];
        const margin = Math.abs(sA - sB);
        if (margin <= TIE_EPS) {
          stats.droppedTies++;
          continue;
        }
        if (margin < minMargin - TIE_EPS) {
          stats.droppedBelowMargin++;
          continue;
        }
        const [chosen, rejected] = sA > sB ? [[idA, sA], [idB, sB]] as const : [[idB, sB], [idA, sA]] as const;
        candidates.push({ task: g.task, chosenId: chosen[0], rejectedId: rejected[0], chosenScore: chosen[1], rejectedScore: rejected[1], margin: chosen[1] - rejected[1] });
      }
    }
    candidates.sort((a, b) => b.margin - a.margin || cmp(a.chosenId, b.chosenId) || cmp(a.rejectedId, b.rejectedId));
    const kept = cap === undefined ? candidates : candidates.slice(0, cap);
    stats.droppedByCap += candidates.length - kept.length;
    pairs.push(...kept);
  }
  stats.pairs = pairs.length;
  return { pairs, stats };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
