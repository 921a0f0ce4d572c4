import { createHash } from 'node:crypto';
import type { Trajectory } from '../../core/trajectory.js';
import { ExportError } from '../errors.js';

/**
 * Filters and task-level splits of an export (docs/datasets.md, "Filters and splits").
 */

/** The reward an export ranks and filters by: `reward.total` when scored, else `outcome.score`. */
export function trajectoryReward(t: Trajectory): number {
  return t.reward?.total ?? t.outcome.score;
}

/** Options of {@link filterTrajectories}. */
export interface FilterOptions {
  successOnly?: boolean;
  /** Keep trajectories whose {@link trajectoryReward} is at least this. */
  minReward?: number;
  /** Keep trajectories with at most this many steps. */
  maxSteps?: number;
}

/** Whether a trajectory passes the filters. */
export function passesFilters(t: Trajectory, f: FilterOptions): boolean {
  if (f.successOnly && !t.outcome.success) return false;
  if (f.minReward !== undefined && trajectoryReward(t) < f.minReward) return false;
  if (f.maxSteps !== undefined && t.steps.length > f.maxSteps) return false;
  return true;
}

/** The trajectories that pass the filters, in order. */
export function filterTrajectories(ts: readonly Trajectory[], f: FilterOptions): Trajectory[] {
  return ts.filter((t) => passesFilters(t, f));
}

/** A split and its share. */
export interface SplitShare {
  name: string;
  fraction: number;
}

/**
 * Parses `train=0.8,validation=0.1,test=0.1`: names `[a-z][a-z0-9_]*` (what `datasets` accepts as
 * split names), positive fractions summing to 1 (± 1e-6).
 */
export function parseSplitSpec(spec: string): SplitShare[] {
  const shares: SplitShare[] = [];
  for (const part of spec.split(',')) {
    const m = /^\s*([a-z][a-z0-9_]*)\s*=\s*([0-9]*\.?[0-9]+)\s*$/.exec(part);
    if (!m) throw new ExportError(`--split-by-task '${spec}': '${part}' is not name=fraction (e.g. train=0.8)`);
    const name = m[1] as string;
    const fraction = Number(m[2]);
    if (!(fraction > 0)) throw new ExportError(`--split-by-task '${spec}': fraction of '${name}' must be > 0`);
    if (shares.some((s) => s.name === name)) throw new ExportError(`--split-by-task '${spec}': split '${name}' appears twice`);
    shares.push({ name, fraction });
  }
  const sum = shares.reduce((a, s) => a + s.fraction, 0);
  if (Math.abs(sum - 1) > 1e-6) throw new ExportError(`--split-by-task '${spec}': fractions sum to ${sum}, not 1`);
  return shares;
}

/**
 * The position of a task in [0, 1): the first 52 bits of sha256(`<seed>:<task id>`). A task's split
 * depends on nothing but its id, the seed and the shares, so all its trajectories land in one split
 * and adding data never moves a task.
 */
export function taskPosition(taskId: string, seed: number): number {
  const hex = createHash('sha256').update(`${seed}:${taskId}`).digest('hex').slice(0, 13);
  return parseInt(hex, 16) / 2 ** 52;
}

/** The split a task belongs to under `shares` (cumulative fractions in the given order). */
export function splitOfTask(taskId: string, shares: readonly SplitShare[], seed: number): string {
  const u = taskPosition(taskId, seed);
  let acc = 0;
  for (const s of shares) {
    acc += s.fraction;
    if (u < acc) return s.name;
  }
  return (shares[shares.length - 1] as SplitShare).name;
}

/** Groups items by the split of their task; every share gets an entry (possibly empty), in share order. */
export function splitByTask<T>(items: readonly T[], taskOf: (item: T) => string, shares: readonly SplitShare[], seed: number): Map<string, T[]> {
  const out = new Map<string, T[]>(shares.map((s) => [s.name, []]));
  for (const item of items) out.get(splitOfTask(taskOf(item), shares, seed))?.push(item);
  return out;
}
