import type { DomainProfile } from '../../core/profiles/profile.js';
import type { Trajectory } from '../../core/trajectory.js';
import { prepareRuleContext, type RuleContext } from './context.js';
import { efficiencyRule } from './efficiency.js';
import { informationUseRule } from './information-use.js';
import { redundancyRule } from './redundancy.js';
import { regressionRule } from './regression.js';
import type { RuleColumn, StepRule, StepRuleRubric } from './types.js';

/** The per-step rubrics of the rule layer, in the order they are run and reported. */
export const STEP_RULE_RUBRICS: readonly StepRuleRubric[] = ['redundancy', 'regression', 'informationUse', 'efficiency'];

/** The rule that scores a rubric, for a context (efficiency's rationale names the reference length). */
export function ruleFor(rubric: StepRuleRubric, ctx: Pick<RuleContext, 'referenceSteps'>): StepRule {
  switch (rubric) {
    case 'redundancy':
      return redundancyRule;
    case 'regression':
      return regressionRule;
    case 'informationUse':
      return informationUseRule;
    case 'efficiency':
      return efficiencyRule(ctx.referenceSteps);
  }
}

/** The columns of a rule run, with the context they were computed from. */
export interface RuleRun {
  readonly ctx: RuleContext;
  readonly columns: readonly RuleColumn[];
  readonly rules: readonly StepRule[];
}

/**
 * Runs the step rules a profile weights (weight > 0; all four when `rubrics` is `'all'`) over a trajectory.
 * Each rule is one linear pass; the shared context is computed once.
 */
export function runRules(
  t: Pick<Trajectory, 'steps' | 'task'>,
  profile: DomainProfile,
  options: { referenceSteps?: number | undefined; rubrics?: readonly StepRuleRubric[] | 'all' | undefined } = {},
): RuleRun {
  const ctx = prepareRuleContext(t, profile, options.referenceSteps);
  const wanted =
    options.rubrics === 'all'
      ? STEP_RULE_RUBRICS
      : (options.rubrics ?? STEP_RULE_RUBRICS.filter((r) => (profile.rubricWeights[r] ?? 0) > 0));
  const rules = wanted.map((r) => ruleFor(r, ctx));
  return { ctx, rules, columns: rules.map((rule) => rule.run(ctx)) };
}
