import type { DomainProfile } from '../core/profiles/profile.js';
import type { REWARD_LAYERS } from '../core/trajectory.js';
import { STEP_RULE_RUBRICS } from './rules/run.js';
import type { StepRuleRubric } from './rules/types.js';
import type { RubricDefinition } from './types.js';

/**
 * Which rubric belongs to which reward layer, and the definitions of the built-in judge rubrics.
 * A profile weights any subset of these (`rubricWeights`) and may define more judge rubrics as data.
 */

/** One of the reward layers a score can come from. */
export type RewardLayer = (typeof REWARD_LAYERS)[number];

/** Rubrics the rule layer scores on every step. */
export const RULE_RUBRICS: readonly StepRuleRubric[] = STEP_RULE_RUBRICS;

/** The trajectory-level rubric: the environment's verdict (layer `env`). */
export const OUTCOME_RUBRIC = 'outcome';

/** The judge rubrics every profile may weight without defining them. */
export const BUILTIN_JUDGE_RUBRICS: readonly RubricDefinition[] = [
  {
    name: 'goalProgress',
    description: 'The step moves the task towards its goal: it gathers needed information, makes a needed change, or completes the task.',
    scale: { '1': 'clear progress towards the goal', '0.5': 'plausible but indirect progress', '0': 'no progress, or moves away from the goal' },
  },
  {
    name: 'toolSelection',
    description: 'The tool called is an appropriate one for what the step tries to do, given the tools available.',
    scale: { '1': 'the right tool', '0.5': 'a workable but clumsy choice', '0': 'a wrong tool for the purpose' },
  },
  {
    name: 'parameterCorrectness',
    description: 'The parameters are correct and complete for the intent: right target, right values, well formed.',
    scale: { '1': 'correct', '0.5': 'partly correct or underspecified', '0': 'wrong or malformed' },
  },
];

const RULE_SET = new Set<string>(RULE_RUBRICS);

/** True for a rubric the rule layer scores. */
export function isRuleRubric(name: string): name is StepRuleRubric {
  return RULE_SET.has(name);
}

/**
 * The judge rubrics a profile weights (weight > 0): built-in ones and the profile's own, in profile order
 * of `rubricWeights`. Only these are sent to the judge; an unweighted rubric would cost tokens and change
 * nothing.
 */
export function weightedJudgeRubrics(profile: DomainProfile): RubricDefinition[] {
  const defs = new Map<string, RubricDefinition>();
  for (const d of BUILTIN_JUDGE_RUBRICS) defs.set(d.name, d);
  for (const d of profile.judgeRubrics) {
    defs.set(d.name, d.scale === undefined ? { name: d.name, description: d.description } : { name: d.name, description: d.description, scale: d.scale });
  }
  const out: RubricDefinition[] = [];
  for (const [name, w] of Object.entries(profile.rubricWeights)) {
    if (!(w > 0) || name === OUTCOME_RUBRIC || isRuleRubric(name)) continue;
    const d = defs.get(name);
    if (d !== undefined) out.push(d);
  }
  return out;
}
