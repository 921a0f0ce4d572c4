import { z } from 'zod';
import { ConfigError, SchemaError } from '../../core/errors.js';
import { formatZodIssues } from '../../core/trajectory.js';
import { JudgeCache } from './cache.js';
import { LlmJudge } from './llm-judge.js';
import { DEFAULT_PROMPT_LIMITS } from './prompt.js';
import { AnthropicProvider } from './providers/anthropic.js';
import { OpenAIProvider } from './providers/openai.js';
import type { JudgeProvider } from './providers/provider.js';
import { DEFAULT_RETRY_POLICY, type RetryHooks } from '../../core/retry.js';

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

/** Extra dependencies of {@link createJudge}, for tests and embedding. */
export interface CreateJudgeDeps {
  /** Where API keys are read from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Replaces the retry loop's sleep/randomness. */
  retryHooks?: Pick<RetryHooks, 'sleep' | 'random'>;
}

/**
 * Creates an LLM judge. Throws {@link ConfigError} naming the env var when no API key is found (for a
 * local server without auth, set the variable to any value, e.g. `OPENAI_API_KEY=EMPTY`).
 *
 * @example
 * ```ts
 * // Anthropic, key from ANTHROPIC_API_KEY, verdicts cached on disk:
 * const judge = createJudge({ provider: 'anthropic', model: 'claude-haiku-4-5', cachePath: '.gymflow/judge-cache.jsonl',
 *   prices: { inputPerMTok: 1, outputPerMTok: 5 } });
 * // A local vLLM server:
 * const local = createJudge({ provider: 'openai', model: 'Qwen/Qwen2.5-7B-Instruct', baseURL: 'http://localhost:8000/v1', apiKey: 'EMPTY' });
 * ```
 */
export function createJudge(config: JudgeConfigInput, deps: CreateJudgeDeps = {}): LlmJudge {
  const c = parseJudgeConfig(config);
  const provider = createJudgeProvider(c, deps.env ?? process.env);
  return new LlmJudge(provider, {
    concurrency: c.concurrency,
    timeoutMs: c.timeoutMs,
    retry: c.retry,
    cache: new JudgeCache(c.cachePath),
    ...(c.prices !== undefined ? { prices: c.prices } : {}),
    limits: c.limits,
    temperature: c.temperature,
    maxTokens: c.maxTokens,
    onInvalid: c.onInvalid,
    ...(deps.retryHooks !== undefined ? { retryHooks: deps.retryHooks } : {}),
  });
}

/**
 * The model API of a judge configuration: its provider, model, key and server. Throws {@link ConfigError} naming
 * the env var when no API key is found (see {@link createJudge}). The step judge and the answer judge
 * (`answer-judge.ts`) both call their model through it.
 */
export function createJudgeProvider(
  c: Pick<JudgeConfig, 'provider' | 'model' | 'responseFormat'> & Partial<Pick<JudgeConfig, 'apiKey' | 'apiKeyEnv' | 'baseURL'>>,
  env: Record<string, string | undefined> = process.env,
): JudgeProvider {
  const keyEnv = c.apiKeyEnv ?? (c.provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY');
  const apiKey = c.apiKey ?? env[keyEnv];
  if (apiKey === undefined || apiKey === '') {
    throw new ConfigError(
      `judge provider '${c.provider}' needs an API key: set ${keyEnv} or pass apiKey in the judge configuration` +
        (c.provider === 'openai' ? ` (a local OpenAI-compatible server without auth accepts any value, e.g. ${keyEnv}=EMPTY)` : ''),
    );
  }
  const base = c.baseURL !== undefined ? { baseURL: c.baseURL } : {};
  return c.provider === 'anthropic'
    ? new AnthropicProvider({ apiKey, model: c.model, keyEnv, ...base })
    : new OpenAIProvider({ apiKey, model: c.model, keyEnv, responseFormat: c.responseFormat, ...base });
}
