import type { JudgeLayer, JudgeUsage, StepJudgement } from '../types.js';

/**
 * A judge layer that answers from verdicts obtained earlier (the pipeline's `judgeRollouts` activity stores them,
 * and `scoreRollouts` scores with them): the verdicts of a trajectory by its id, none for one it lacks. It sends no
 * request, so its usage is all zeros; the judge that obtained the verdicts reported what they cost.
 */
export class RecordedJudge implements JudgeLayer {
  constructor(
    readonly name: string,
    private readonly verdicts: ReadonlyMap<string, readonly StepJudgement[]>,
  ) {}

  /** The recorded verdicts of `trajectory` (matched by id). */
  judge(trajectory: { id: string }): Promise<StepJudgement[]> {
    return Promise.resolve([...(this.verdicts.get(trajectory.id) ?? [])]);
  }

  /** No requests: every count is 0. */
  usage(): JudgeUsage {
    return { requests: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, failures: 0 };
  }
}
