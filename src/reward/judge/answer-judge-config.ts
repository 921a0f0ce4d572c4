import { z } from 'zod';
import { SchemaError } from '../../core/errors.js';
import { jsonPath } from '../../core/trajectory.js';
import { JudgeConfigSchema } from './config-schema.js';

/*
 * The configuration of the answer judge (`answer-judge.ts`), apart from the judge: it loads no model SDK, so an
 * environment can check its keyword arguments at \`make\` and load the judge only at its first answer.
 */

/**
 * The answer judge's configuration: the step judge's model fields (`JudgeConfigSchema`) that apply to it. No
 * cache and no prompt limits (every response is judged once, whole); 4096 output tokens by default, as HLE's script.
 */
export const AnswerJudgeConfigSchema = JudgeConfigSchema.pick({
  provider: true,
  model: true,
  apiKey: true,
  apiKeyEnv: true,
  baseURL: true,
  prices: true,
  concurrency: true,
  timeoutMs: true,
  retry: true,
  temperature: true,
  responseFormat: true,
})
  .extend({ maxTokens: z.number().int().positive().default(4096) })
  .strict();

/** The answer judge's configuration as written. */
export type AnswerJudgeConfigInput = z.input<typeof AnswerJudgeConfigSchema>;
/** The answer judge's configuration with defaults applied. */
export type AnswerJudgeConfig = z.output<typeof AnswerJudgeConfigSchema>;

/**
 * Validates an answer judge configuration. Errors read `place $.path: message`, the path starting at `at` (the
 * configuration's own place in a larger document: `['judge']` for an environment's keyword argument).
 */
export function parseAnswerJudgeConfig(value: unknown, place = '<judge>', at: readonly PropertyKey[] = []): AnswerJudgeConfig {
  const r = AnswerJudgeConfigSchema.safeParse(value);
  if (!r.success) {
    const issues = r.error.issues.map((issue) => `${place} ${jsonPath([...at, ...issue.path])}: ${issue.message}`);
    throw new SchemaError(`invalid answer judge configuration:\n${issues.join('\n')}`, issues);
  }
  return r.data;
}
