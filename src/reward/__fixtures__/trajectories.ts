import { makeTrajectory, type Outcome, type Trajectory, type TrajectoryStep } from '../../core/trajectory.js';

/**
 * Builders for small trajectories in reward tests: steps from `[tool, params, observation]` triples,
 * wrapped with a task and an outcome into a validated trajectory.
 */

/** One step as a tuple: tool, params, observation, and optional extra step fields. */
export type StepSpec = [tool: string, params: Record<string, unknown>, observation?: string, extra?: Partial<TrajectoryStep>];

/** Steps with consecutive indices and fixed timing. */
export function steps(specs: readonly StepSpec[]): TrajectoryStep[] {
  return specs.map(([tool, params, observation, extra], index) => ({
    index,
    action: { tool, params },
    observation: observation ?? 'ok',
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1,
    ...extra,
  }));
}

/** A validated trajectory of `specs` on a task with `instruction`. */
export function trajectory(
  specs: readonly StepSpec[],
  options: { instruction?: string; domain?: string; outcome?: Partial<Outcome> } = {},
): Trajectory {
  return makeTrajectory({
    task: { id: 'task-1', domain: options.domain ?? 'coding', instruction: options.instruction ?? 'Fix the tests.' },
    envId: 'gymflow/test-v0',
    agent: { name: 'test' },
    steps: steps(specs),
    outcome: { success: true, score: 1, terminated: true, truncated: false, reason: 'submitted', ...options.outcome },
    metadata: {},
  });
}
