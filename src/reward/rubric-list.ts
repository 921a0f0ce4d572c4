import type { DomainProfile } from '../core/profiles/profile.js';
import { listRubrics } from './judge/rubrics.js';
import { OUTCOME_RUBRIC, RULE_RUBRICS, type RewardLayer } from './rubrics.js';
import type { StepRuleRubric } from './rules/types.js';
import { defined } from '../core/defined.js';

/**
 * Every rubric a domain's reward is made of, layer by layer: the environment's outcome, the rule layer's per-step
 * rules, and the judge's rubrics (`gymflow reward rubrics`, the MCP tool `list_rubrics`). docs/reward.md defines each.
 */

/** One rubric of a profile. */
export interface RubricRow {
  name: string;
  /** The layer that scores it: `env` (the outcome), `rules`, or `judge`. */
  layer: Extract<RewardLayer, 'env' | 'rules' | 'judge'>;
  /** `step` for per-step rubrics, `trajectory` for the outcome. */
  level: 'step' | 'trajectory';
  description: string;
  /** `builtin`, or `profile` for a judge rubric the profile defines (or rewords). */
  source: 'builtin' | 'profile';
  /** The profile's raw weight (0 when it has none: the rubric is then not scored). */
  weight: number;
  /** Judge rubrics: what each score means. */
  scale?: Record<string, string>;
}

/** What each rule measures, in a line (docs/reward.md has the definitions). */
const RULE_DESCRIPTIONS: Record<StepRuleRubric, string> = {
  redundancy: 'A repeated call that can return nothing new (same call, nothing it depends on changed since) scores 0.',
  regression: 'An action that undoes an earlier change (restores a value an earlier step replaced, reverses an edit, discards writes through git) scores 0.',
  informationUse: 'Does the action use what earlier observations revealed (their informative tokens in its parameters)?',
  efficiency: 'Steps within the reference length (referenceSteps, else the profile step budget) score 1, those beyond it 0.',
};

/** The outcome's line. */
const OUTCOME_DESCRIPTION = "The environment's verdict: 1 on success, else the outcome score clamped to [0, 1]; on the trajectory, on no step.";

/**
 * Every rubric of `profile`: the outcome, the four rules, then the judge's rubrics ({@link listRubrics}), each with its
 * layer and the profile's weight.
 *
 * @example
 * ```ts
 * for (const r of allRubrics(getProfile('coding'))) console.log(r.layer, r.name, r.weight);
 * ```
 */
export function allRubrics(profile: DomainProfile): RubricRow[] {
  const weight = (name: string): number => profile.rubricWeights[name] ?? 0;
  return [
    { name: OUTCOME_RUBRIC, layer: 'env', level: 'trajectory', description: OUTCOME_DESCRIPTION, source: 'builtin', weight: weight(OUTCOME_RUBRIC) },
    ...RULE_RUBRICS.map((name) => ({ name, layer: 'rules' as const, level: 'step' as const, description: RULE_DESCRIPTIONS[name], source: 'builtin' as const, weight: weight(name) })),
    ...listRubrics(profile).map((r) => ({ name: r.name, layer: 'judge' as const, level: 'step' as const, description: r.description, source: r.source, weight: r.weight, ...defined({ scale: r.scale }) })),
  ];
}
