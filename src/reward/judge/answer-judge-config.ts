import { z } from 'zod';
import { ConfigError, SchemaError } from '../../core/errors.js';
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

/**
 * A judge named by a spec string, as agents and simulated users are: `openai:MODEL[@BASE_URL]` (any
 * OpenAI-compatible server; a URL without a path gets `/v1`) or `anthropic:MODEL[@BASE_URL]`. The key comes from
 * `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`. A model name may contain `@`: the URL starts at the first `@http`.
 *
 * @example
 * judgeSpecConfig('openai:o3-mini'); // { provider: 'openai', model: 'o3-mini' }
 * judgeSpecConfig('openai:Qwen/Qwen2.5-72B-Instruct@http://gpu:8000'); // …, baseURL: 'http://gpu:8000/v1'
 */
export function judgeSpecConfig(spec: string): { provider: 'openai' | 'anthropic'; model: string; baseURL?: string } {
  const m = /^(openai|anthropic):(.*)$/.exec(spec.trim());
  if (!m) throw new ConfigError(`judge spec '${spec}': expected openai:MODEL[@BASE_URL] or anthropic:MODEL[@BASE_URL], or a judge configuration object`);
  const provider = m[1] as 'openai' | 'anthropic';
  const rest = m[2] as string;
  const at = rest.search(/@https?:\/\//);
  const model = (at < 0 ? rest : rest.slice(0, at)).trim();
  if (model === '') throw new ConfigError(`judge spec '${spec}' names no model; use ${provider}:MODEL or ${provider}:MODEL@http://host:port`);
  if (at < 0) return { provider, model };
  const raw = rest.slice(at + 1).trim().replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`judge spec '${spec}': '${raw}' is not a valid URL`);
  }
  // The OpenAI SDK's base URL includes the API's /v1; the Anthropic SDK appends /v1/messages itself.
  const baseURL = provider === 'openai' && (url.pathname === '/' || url.pathname === '') ? `${url.origin}/v1` : raw;
  return { provider, model, baseURL };
}
