import { ConfigError } from '../../core/errors.js';
import type { DomainProfile } from '../../core/profiles/profile.js';
import { isRuleRubric, OUTCOME_RUBRIC } from '../rubrics.js';
import { judgeRubrics } from './rubrics.js';

/** A judge rubric chosen by configuration (the pipeline's `reward.judge.rubrics`), with its weight. */
export interface ChosenRubric {
  name: string;
  description?: string | undefined;
  scale?: Record<string, string> | undefined;
  weight: number;
}

/**
 * The profile whose weighted judge rubrics are exactly `chosen`: the rules' and the outcome's weights stay, every other
 * judge rubric of the profile gets weight 0, and each chosen rubric gets its weight (and, when given, its wording; a
 * new name needs a description). Scoring with the result sends the judge exactly these rubrics.
 *
 * @param field Where the list came from, named in errors (`$.reward.judge.rubrics`).
 * @throws ConfigError for a rule or outcome rubric, or a new rubric without a description.
 */
export function profileWithJudgeRubrics(profile: DomainProfile, chosen: readonly ChosenRubric[], field: string): DomainProfile {
  const known = new Map(judgeRubrics(profile).map((r) => [r.name, r]));
  const weights: Record<string, number> = {};
  for (const [name, w] of Object.entries(profile.rubricWeights)) {
    if (name === OUTCOME_RUBRIC || isRuleRubric(name)) weights[name] = w;
    else weights[name] = 0;
  }
  const own = new Map(profile.judgeRubrics.map((r) => [r.name, r]));
  chosen.forEach((c, i) => {
    if (c.name === OUTCOME_RUBRIC || isRuleRubric(c.name)) {
      throw new ConfigError(`${field}[${i}].name: '${c.name}' is scored by the ${c.name === OUTCOME_RUBRIC ? 'environment' : 'rule layer'}, not the judge`);
    }
    const base = known.get(c.name);
    const description = c.description ?? base?.description;
    if (description === undefined) {
      throw new ConfigError(`${field}[${i}].description: rubric '${c.name}' is neither built in nor in profile '${profile.name}': describe what it asks`);
    }
    const scale = c.scale ?? base?.scale;
    own.set(c.name, scale === undefined ? { name: c.name, description } : { name: c.name, description, scale });
    weights[c.name] = c.weight;
  });
  return { ...profile, judgeRubrics: [...own.values()], rubricWeights: weights };
}
