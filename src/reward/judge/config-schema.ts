import { z } from 'zod';
import { ConfigError, SchemaError } from '../../core/errors.js';
import { DEFAULT_RETRY_POLICY } from '../../core/retry.js';
import { formatZodIssues } from '../../core/trajectory.js';
import { DEFAULT_PROMPT_LIMITS } from './prompt.js';

/*
 * The judge's configuration and its API key, apart from the judges themselves: this module loads no model SDK, so
 * what validates a configuration early (an environment's keyword arguments at \`make\`) stays cheap to import.
 */

/**
 * The judge's configuration. The judge is off unless one is created from this: nothing in gymflow
 * calls a paid API on its own.
 */
export const JudgeConfigSchema = z
  .object({
    /** `anthropic` (Messages API) or `openai` (OpenAI or any OpenAI-compatible server, e.g. vLLM). */
    provider: z.enum(['anthropic', 'openai']),
    model: z.string().min(1),
    /** The API key; default: the env var `apiKeyEnv`. */
    apiKey: z.string().min(1).optional(),
    /** Env var holding the key (default `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`). */
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
    /** API base URL: `http://localhost:8000/v1` for vLLM; default the provider's (or its `*_BASE_URL` env var). */
    baseURL: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL, like http://localhost:8000/v1' }).optional(),
    /** US dollars per million input / output tokens, for `usage().costUsd`. */
    prices: z.object({ inputPerMTok: z.number().nonnegative(), outputPerMTok: z.number().nonnegative() }).strict().optional(),
    /** Requests in flight at once. */
    concurrency: z.number().int().min(1).max(256).default(4),
    /** Per-request timeout. */
    timeoutMs: z.number().int().positive().default(60_000),
    retry: z
      .object({
        maxRetries: z.number().int().min(0).max(20).default(DEFAULT_RETRY_POLICY.maxRetries),
        baseDelayMs: z.number().nonnegative().default(DEFAULT_RETRY_POLICY.baseDelayMs),
        maxDelayMs: z.number().nonnegative().default(DEFAULT_RETRY_POLICY.maxDelayMs),
      })
      .strict()
      .default(DEFAULT_RETRY_POLICY),
    /** JSONL file of cached verdicts (created on first write); without it the cache lives in memory only. */
    cachePath: z.string().min(1).optional(),
    /** Output tokens per request. */
    maxTokens: z.number().int().positive().default(1024),
    /** Sampling temperature for OpenAI-compatible servers (`null`: send none, e.g. for reasoning models). */
    temperature: z.number().min(0).max(2).nullable().default(0),
    /** Prompt bounds: earlier steps shown and per-field character limits. */
    limits: z
      .object({
        historySteps: z.number().int().nonnegative().default(DEFAULT_PROMPT_LIMITS.historySteps),
        historyFieldChars: z.number().int().positive().default(DEFAULT_PROMPT_LIMITS.historyFieldChars),
        stepFieldChars: z.number().int().positive().default(DEFAULT_PROMPT_LIMITS.stepFieldChars),
        instructionChars: z.number().int().positive().default(DEFAULT_PROMPT_LIMITS.instructionChars),
      })
      .strict()
      .default(DEFAULT_PROMPT_LIMITS),
    /** A verdict still invalid after the repair: `skip` the step (default) or `throw`. */
    onInvalid: z.enum(['skip', 'throw']).default('skip'),
    /** What the judge may spend: HTTP requests (`calls`) and input + output `tokens` (see `JudgeBudget`). */
    budget: z.object({ calls: z.number().int().nonnegative().optional(), tokens: z.number().int().nonnegative().optional() }).strict().optional(),
    /** OpenAI-compatible only: start with `json_schema` (default; falls back on 400/422) or use `json_object`. */
    responseFormat: z.enum(['json_schema', 'json_object']).default('json_schema'),
  })
  .strict();

/** The judge configuration as written (defaults optional). */
export type JudgeConfigInput = z.input<typeof JudgeConfigSchema>;
/** The judge configuration with defaults applied. */
export type JudgeConfig = z.output<typeof JudgeConfigSchema>;

/** Validates a judge configuration; `place` names its source in errors. */
export function parseJudgeConfig(value: unknown, place = '<judge config>'): JudgeConfig {
  const r = JudgeConfigSchema.safeParse(value);
  if (!r.success) {
    const issues = formatZodIssues(r.error, place);
    throw new SchemaError(`invalid judge configuration:\n${issues.join('\n')}`, issues);
  }
  return r.data;
}

/**
 * The API key of a judge configuration: `apiKey`, else the env var `apiKeyEnv` (default `ANTHROPIC_API_KEY` /
 * `OPENAI_API_KEY`). Throws {@link ConfigError} naming the variable when there is none (for a local server without
 * auth, set it to any value, e.g. `OPENAI_API_KEY=EMPTY`).
 */
export function resolveJudgeApiKey(
  c: Pick<JudgeConfig, 'provider'> & Partial<Pick<JudgeConfig, 'apiKey' | 'apiKeyEnv'>>,
  env: Record<string, string | undefined> = process.env,
): { apiKey: string; keyEnv: string } {
  const keyEnv = c.apiKeyEnv ?? (c.provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY');
  const apiKey = c.apiKey ?? env[keyEnv];
  if (apiKey === undefined || apiKey === '') {
    throw new ConfigError(
      `judge provider '${c.provider}' needs an API key: set ${keyEnv} or pass apiKey in the judge configuration` +
        (c.provider === 'openai' ? ` (a local OpenAI-compatible server without auth accepts any value, e.g. ${keyEnv}=EMPTY)` : ''),
    );
  }
  return { apiKey, keyEnv };
}
