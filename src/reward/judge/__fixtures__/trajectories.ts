import { getProfile } from '../../../core/profiles/registry.js';
import type { DomainProfile } from '../../../core/profiles/profile.js';
import { makeTrajectory, type Trajectory } from '../../../core/trajectory.js';

/** Test support: the built-in `coding` profile. */
export function codingProfile(): DomainProfile {
  return getProfile('coding');
}

/** Test support: a coding trajectory with `n` steps (reads, then a submit); `tag` makes distinct content. */
export function codingTrajectory(n = 3, tag = 'a'): Trajectory {
  return makeTrajectory({
    task: { id: `fix-${tag}`, domain: 'coding', instruction: `Make the failing test in tests/test_${tag}.py pass.` },
    envId: 'gymflow/sandbox-v0',
    agent: { name: 'tester', model: 'policy-test' },
    steps: Array.from({ length: n }, (_, index) => ({
      index,
      thought: `step ${index} of ${tag}`,
      action: index === n - 1 ? { tool: 'submit', params: {} } : { tool: 'file_read', params: { path: `src/${tag}_${index}.py` } },
      observation: index === n - 1 ? 'submitted' : `contents of src/${tag}_${index}.py`,
      startedAt: '2026-01-01T00:00:00.000Z',
      durationMs: 5,
    })),
    outcome: { success: true, score: 1, terminated: true, truncated: false, reason: 'submitted' },
    metadata: {},
  });
}
