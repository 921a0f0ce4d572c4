import type { DomainProfile } from '../../core/profiles/profile.js';
import { BUILTIN_JUDGE_RUBRICS } from '../rubrics.js';
import type { RubricDefinition } from '../types.js';

/**
 * The judge's rubrics: the three built-ins (`goalProgress`, `toolSelection`, `parameterCorrectness`,
 * defined once in `src/reward/rubrics.ts`) plus whatever `judgeRubrics` a domain profile defines as
 * data. A profile rubric with a built-in's name replaces the built-in's wording for that domain. The
 * set actually sent to the judge when scoring is `weightedJudgeRubrics(profile)` (weight > 0).
 */

/** Every rubric the judge can score for a profile: built-ins (possibly reworded by the profile) then the profile's own. */
export function judgeRubrics(profile: DomainProfile): RubricDefinition[] {
  const own = new Map(profile.judgeRubrics.map((r) => [r.name, toDefinition(r)]));
  const builtins = BUILTIN_JUDGE_RUBRICS.map((r) => own.get(r.name) ?? r);
  const extra = profile.judgeRubrics.filter((r) => !BUILTIN_JUDGE_RUBRICS.some((b) => b.name === r.name)).map(toDefinition);
  return [...builtins, ...extra];
}

/** A judge rubric as `gymflow reward rubrics` lists it. */
export interface RubricInfo extends RubricDefinition {
  /** `builtin`, or `profile` when the profile defines (or redefines) it. */
  source: 'builtin' | 'profile';
  /** The profile's raw weight (0 when it has none): only rubrics weighted above 0 are sent to the judge. */
  weight: number;
}

/**
 * Lists the judge rubrics of a profile with their source and weight. (Rule-layer rubrics such as
 * `redundancy` are computed without a judge and are not listed here.)
 *
 * @example
 * ```ts
 * for (const r of listRubrics(getProfile('coding'))) console.log(r.name, r.source, r.weight, r.description);
 * ```
 */
export function listRubrics(profile: DomainProfile): RubricInfo[] {
  const own = new Set(profile.judgeRubrics.map((r) => r.name));
  return judgeRubrics(profile).map((r) => ({ ...r, source: own.has(r.name) ? 'profile' : 'builtin', weight: profile.rubricWeights[r.name] ?? 0 }));
}

function toDefinition(r: DomainProfile['judgeRubrics'][number]): RubricDefinition {
  return r.scale !== undefined ? { name: r.name, description: r.description, scale: r.scale } : { name: r.name, description: r.description };
}
