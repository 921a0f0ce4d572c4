import { JudgeCache } from './cache.js';
import { parseJudgeConfig, resolveJudgeApiKey, type JudgeConfig, type JudgeConfigInput } from './config-schema.js';
import { LlmJudge } from './llm-judge.js';
import { AnthropicProvider } from './providers/anthropic.js';
import { OpenAIProvider } from './providers/openai.js';
import type { JudgeProvider } from './providers/provider.js';
import type { RetryHooks } from '../../core/retry.js';
import { defined } from '../../core/defined.js';

export * from './config-schema.js';

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
    ...defined({ prices: c.prices }),
    limits: c.limits,
    ...defined({ budget: c.budget }),
    temperature: c.temperature,
    maxTokens: c.maxTokens,
    onInvalid: c.onInvalid,
    ...defined({ retryHooks: deps.retryHooks }),
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
  const { apiKey, keyEnv } = resolveJudgeApiKey(c, env);
  const base = defined({ baseURL: c.baseURL });
  return c.provider === 'anthropic'
    ? new AnthropicProvider({ apiKey, model: c.model, keyEnv, ...base })
    : new OpenAIProvider({ apiKey, model: c.model, keyEnv, responseFormat: c.responseFormat, ...base });
}
