import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { SchemaError } from '../errors.js';
import { toolSchemaProblem } from '../tool-validator.js';
import { formatZodIssues } from '../trajectory.js';
import { TOOL_CATEGORIES } from '../types.js';

/**
 * A `DomainProfile` describes a domain declaratively: its tools with categories, which tools end an
 * episode, how the outcome is judged, and how the reward rubrics are weighted. Profiles are data
 * (JSON files); adding a domain touches no code.
 */

/** How a domain's outcome is decided; the environment implements the rule named here. */
export const OUTCOME_RULES = [
  'exact-match',
  'numeric-match',
  'tests-pass',
  'final-state-match',
  'attribute-match',
  'goal-condition',
  'rubric-judge',
  // Hard constraints as a gate, times the value relative to the best feasible value (gymflow/advisory-v0).
  'constraint-optimality',
  // A judge model decides whether a free-text answer matches the reference, as Humanity's Last Exam grades (gymflow/qa-v0).
  'reference-judge',
] as const;

/** The rubrics the reward layers know; a profile weights any subset, and may add its own judge rubrics. */
export const BUILTIN_RUBRICS = [
  'outcome',
  'redundancy',
  'regression',
  'informationUse',
  'efficiency',
  'goalProgress',
  'toolSelection',
  'parameterCorrectness',
] as const;

/**
 * Names a profile's own judge rubric may not take: the rubrics the rules and the outcome compute (a judge
 * rubric of that name would never be asked) and `learned`, the learned reward model's. A built-in judge
 * rubric's name is allowed: the profile's wording replaces the built-in's.
 */
export const RESERVED_RUBRICS = ['outcome', 'redundancy', 'regression', 'informationUse', 'efficiency', 'learned'] as const;

const ToolSpecSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]*$/, 'tool names are snake_case'),
    description: z.string().min(1),
    parameters: z.record(z.string(), z.unknown()),
    category: z.enum(TOOL_CATEGORIES),
  })
  .strict();

const JudgeRubricSchema = z
  .object({
    name: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]*$/),
    description: z.string().min(1),
    /** What a score of 1 / 0.5 / 0 means, for the judge prompt. */
    scale: z.record(z.string(), z.string()).optional(),
  })
  .strict();

/** The schema of a domain profile, with cross-field checks (terminal tools exist, rubrics are known). */
export const DomainProfileSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/, 'profile names are kebab-case'),
    description: z.string().min(1),
    tools: z.array(ToolSpecSchema).min(1),
    terminalTools: z.array(z.string()).min(1),
    outcome: z
      .object({
        rule: z.enum(OUTCOME_RULES),
        description: z.string().min(1),
        /** Where the rule comes from (SWE-bench, tau-bench, WebShop, ALFWorld, …). */
        source: z.string().optional(),
      })
      .strict(),
    /** Rubric → non-negative weight; normalised to sum 1 when combined. */
    rubricWeights: z.record(z.string(), z.number().nonnegative()),
    /** Extra rubrics for the LLM judge, defined as data. */
    judgeRubrics: z.array(JudgeRubricSchema).default([]),
    /** Steps a competent agent needs for a typical task (the efficiency rule's budget). */
    stepBudget: z.number().int().positive(),
  })
  .strict()
  .superRefine((p, ctx) => {
    const names = p.tools.map((t) => t.name);
    names.forEach((n, i) => {
      if (names.indexOf(n) !== i) ctx.addIssue({ code: 'custom', path: ['tools', i, 'name'], message: `duplicate tool name '${n}'` });
    });
    p.terminalTools.forEach((t, i) => {
      if (!names.includes(t)) {
        ctx.addIssue({ code: 'custom', path: ['terminalTools', i], message: `terminal tool '${t}' is not one of the profile's tools (${names.join(', ')})` });
      }
    });
    const rubricNames = p.judgeRubrics.map((r) => r.name);
    rubricNames.forEach((n, i) => {
      const path = ['judgeRubrics', i, 'name'];
      if (rubricNames.indexOf(n) !== i) ctx.addIssue({ code: 'custom', path, message: `duplicate judge rubric name '${n}'` });
      else if ((RESERVED_RUBRICS as readonly string[]).includes(n)) {
        ctx.addIssue({ code: 'custom', path, message: `'${n}' is a rubric gymflow defines (${RESERVED_RUBRICS.join(', ')}); give yours another name` });
      } else if (n in Object.prototype) ctx.addIssue({ code: 'custom', path, message: `'${n}' cannot name a rubric (it is a property every object has)` });
    });
    const known = new Set<string>([...BUILTIN_RUBRICS, ...rubricNames]);
    for (const rubric of Object.keys(p.rubricWeights)) {
      if (!known.has(rubric)) {
        ctx.addIssue({ code: 'custom', path: ['rubricWeights', rubric], message: `unknown rubric '${rubric}': define it in judgeRubrics or use one of ${BUILTIN_RUBRICS.join(', ')}` });
      }
    }
    if (!Object.values(p.rubricWeights).some((w) => w > 0)) {
      ctx.addIssue({ code: 'custom', path: ['rubricWeights'], message: 'at least one rubric weight must be > 0' });
    }
  });

/** A validated domain profile. */
export type DomainProfile = z.infer<typeof DomainProfileSchema>;

/** How much {@link parseProfile} checks. */
export interface ParseProfileOptions {
  /**
   * Compile each tool's parameters schema (default true). Off for gymflow's built-in profiles only: compiling
   * loads Ajv, a quarter of `gymflow envs`'s start-up, and profile.test.ts checks them with it on.
   */
  checkToolSchemas?: boolean;
}

/** Validates a profile value; `place` names its source in error messages. */
export function parseProfile(value: unknown, place: string, options: ParseProfileOptions = {}): DomainProfile {
  const result = DomainProfileSchema.safeParse(value);
  if (!result.success) {
    const issues = formatZodIssues(result.error, place);
    throw new SchemaError(`invalid domain profile:\n${issues.join('\n')}`, issues);
  }
  if (options.checkToolSchemas === false) return result.data;
  const issues = result.data.tools.flatMap((tool, i) => {
    const problem = toolSchemaProblem(tool.parameters);
    return problem === undefined ? [] : [`${place} $.tools[${i}].parameters: not a valid JSON Schema (${problem})`];
  });
  if (issues.length > 0) throw new SchemaError(`invalid domain profile:\n${issues.join('\n')}`, issues);
  return result.data;
}

/** Reads and validates a profile from a JSON file. */
export function loadProfileFile(file: string, options: ParseProfileOptions = {}): DomainProfile {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new SchemaError(`${file}: cannot read profile: ${(err as Error).message}`);
  }
  return parseProfile(value, file, options);
}

/** Rubric weights normalised to sum 1 (rubrics with weight 0 dropped). */
export function normalisedWeights(profile: DomainProfile): Record<string, number> {
  const entries = Object.entries(profile.rubricWeights).filter(([, w]) => w > 0);
  const total = entries.reduce((a, [, w]) => a + w, 0);
  return Object.fromEntries(entries.map(([k, w]) => [k, w / total]));
}
