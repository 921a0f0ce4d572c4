/**
 * The trajectories the reward benchmarks score: synthetic coding trajectories of a given length, and the
 * converted real agent logs of the fixtures. Shared by `reward.ts` (throughput) and `reward-compare.ts`
 * (a change against a base commit), so both measure the same work.
 */
import { existsSync } from 'node:fs';
import type { Trajectory } from '../src/core/trajectory.js';
import { isConversionProblem } from '../src/recorder/adapter.js';
import { convertPath } from '../src/recorder/convert.js';
import { FIXTURES } from '../src/recorder/__fixtures__/fixtures.js';
import { syntheticTrajectory } from './synthetic-trajectories.js';

/** Steps per synthetic pool: distinct trajectories are cycled, so caches cannot remember one trajectory. */
export const POOL_STEPS = 100_000;

/** Distinct synthetic trajectories of `length` steps (at least two), `POOL_STEPS` steps in all. */
export function syntheticPool(length: number): Trajectory[] {
  const count = Math.max(2, Math.floor(POOL_STEPS / length));
  return Array.from({ length: count }, (_, i) => syntheticTrajectory(length, 1000 * length + i));
}

/**
 * Every agent-log fixture (`../shared/fixtures/agent-logs`, or `GYMFLOW_FIXTURES`), converted; or why there
 * are none.
 */
export async function agentLogPool(): Promise<Trajectory[] | { reason: string }> {
  const dir = FIXTURES;
  if (!existsSync(dir)) return { reason: `no agent-log fixtures at ${dir} (set GYMFLOW_FIXTURES)` };
  const pool: Trajectory[] = [];
  for await (const item of convertPath(dir)) if (!isConversionProblem(item)) pool.push(item);
  if (pool.length === 0) return { reason: `no trajectory converted from ${dir}` };
  return pool;
}
