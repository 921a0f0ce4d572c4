import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Trajectory } from '../../core/trajectory.js';
import { parseTrajectory } from '../../core/trajectory.js';
import type { ConversionItem, ConversionProblem, LogAdapter } from '../adapter.js';
import { isConversionProblem } from '../adapter.js';
import { PACKAGE_ROOT } from '../../core/package-root.js';

/**
 * Test support: where the real agent-log fixtures live, and a helper that converts one and checks every
 * produced trajectory survives a JSON round trip through the schema.
 */

/** The fixture folder: `$GYMFLOW_FIXTURES`, else `../shared/fixtures/agent-logs` beside the repository. */
export const FIXTURES = process.env.GYMFLOW_FIXTURES ?? resolve(PACKAGE_ROOT, '..', 'shared', 'fixtures', 'agent-logs');

/** The absolute path of a fixture; throws a clear error when the fixture folder is missing. */
export function fixture(relative: string): string {
  if (!existsSync(FIXTURES)) {
    throw new Error(`agent-log fixtures not found at ${FIXTURES}; set GYMFLOW_FIXTURES to the agent-logs folder`);
  }
  return resolve(FIXTURES, relative);
}

/** Trajectories and problems of a conversion, split. */
export interface Collected {
  trajectories: Trajectory[];
  problems: ConversionProblem[];
  /** Problems of severity `error`. */
  errors: ConversionProblem[];
}

/** Drains a conversion. Every trajectory is re-validated after a JSON round trip (what a JSONL reader sees). */
export async function collect(items: AsyncIterable<ConversionItem>): Promise<Collected> {
  const out: Collected = { trajectories: [], problems: [], errors: [] };
  for await (const item of items) {
    if (isConversionProblem(item)) {
      out.problems.push(item);
      if (item.severity === 'error') out.errors.push(item);
    } else {
      out.trajectories.push(parseTrajectory(JSON.parse(JSON.stringify(item)), 'round-trip'));
    }
  }
  return out;
}

/** Converts one fixture with `adapter`. */
export function convertFixture(adapter: LogAdapter, relative: string): Promise<Collected> {
  const path = fixture(relative);
  return collect(adapter.convert(path, { file: path, options: {} }));
}

/** The only trajectory of a conversion (fails the test otherwise). */
export function only(c: Collected): Trajectory {
  if (c.trajectories.length !== 1) throw new Error(`expected exactly one trajectory, got ${c.trajectories.length}`);
  return c.trajectories[0] as Trajectory;
}

/** Tool names of a trajectory's steps, in order. */
export function tools(t: Trajectory): string[] {
  return t.steps.map((s) => s.action.tool);
}

/** The step at `index` (fails the test when absent). */
export function step(t: Trajectory, index: number): Trajectory['steps'][number] {
  const s = t.steps[index];
  if (!s) throw new Error(`no step ${index} (trajectory has ${t.steps.length})`);
  return s;
}
