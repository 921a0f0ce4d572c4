import type { Agent } from '../core/agent.js';
import { ConfigError } from '../core/errors.js';
import { spec } from '../core/registry.js';
import { AnthropicPolicy, type AnthropicPolicyOptions } from './anthropic.js';
import { OpenAIPolicy, type OpenAIPolicyOptions } from './openai.js';
import { RandomAgent } from './random.js';

/** Agent specs every environment accepts, besides the ones its registration names (`expert`). */
export const GENERIC_AGENTS = ['random', 'openai:MODEL[@BASE_URL]', 'anthropic:MODEL'] as const;

/** Options of {@link resolveAgent}. */
export interface ResolveAgentOptions {
  seed?: number;
  /** Where API keys are read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Overrides for an `openai:` agent (mode, sampling, timeouts, …). */
  openai?: Partial<Omit<OpenAIPolicyOptions, 'model' | 'envId'>>;
  /** Overrides for an `anthropic:` agent. */
  anthropic?: Partial<Omit<AnthropicPolicyOptions, 'model' | 'envId'>>;
}

/**
 * Splits `MODEL[@BASE_URL]`: the URL starts at the first `@http://` or `@https://`, so model names may
 * contain `@`. A URL without a path gets `/v1` (the SDK's base URL includes it).
 */
export function parseOpenAISpec(rest: string): { model: string; baseURL?: string } {
  const at = rest.search(/@https?:\/\//);
  const model = (at < 0 ? rest : rest.slice(0, at)).trim();
  if (model === '') throw new ConfigError(`agent spec 'openai:${rest}' names no model; use openai:MODEL or openai:MODEL@http://host:8000/v1`);
  if (at < 0) return { model };
  const raw = rest.slice(at + 1).trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`agent spec 'openai:${rest}': '${raw}' is not a valid URL`);
  }
  const baseURL = url.pathname === '/' || url.pathname === '' ? `${url.origin}/v1` : raw.replace(/\/+$/, '');
  return { model, baseURL };
}

function requireKey(env: Record<string, string | undefined>, name: string, agentSpec: string, hint: string): string {
  const key = env[name];
  if (key === undefined || key.trim() === '') throw new ConfigError(`agent '${agentSpec}' needs an API key: set ${name}${hint}`);
  return key;
}

/**
 * Builds an agent from a spec string for an environment:
 *
 * - `random` (any env);
 * - `openai:MODEL[@BASE_URL]`: an OpenAI-compatible server (text `<tool_call>` mode; key from
 *   `OPENAI_API_KEY`, `EMPTY` for a local vLLM), e.g. `openai:Qwen/Qwen2.5-7B-Instruct@http://localhost:8000/v1`;
 * - `anthropic:MODEL`: the Anthropic API with native tool use (key from `ANTHROPIC_API_KEY`);
 * - an agent the env registered (`expert`).
 *
 * Throws `ConfigError` for an unknown spec (listing the forms) or a missing key (naming the env var).
 */
export function resolveAgent(agentSpec: string, envId: string, options: ResolveAgentOptions = {}): Agent {
  if (agentSpec === 'random') return new RandomAgent(options.seed === undefined ? {} : { seed: options.seed });
  const env = options.env ?? process.env;
  if (agentSpec.startsWith('openai:')) {
    const { model, baseURL } = parseOpenAISpec(agentSpec.slice('openai:'.length));
    const apiKey = options.openai?.apiKey ?? requireKey(env, 'OPENAI_API_KEY', agentSpec, ' (any value, e.g. EMPTY, for a local vLLM without --api-key)');
    return new OpenAIPolicy({
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      ...options.openai,
      ...(baseURL !== undefined ? { baseURL } : {}),
      apiKey,
      model,
      envId,
    });
  }
  if (agentSpec.startsWith('anthropic:')) {
    const model = agentSpec.slice('anthropic:'.length).trim();
    if (model === '') throw new ConfigError(`agent spec '${agentSpec}' names no model; use anthropic:MODEL`);
    const apiKey = options.anthropic?.apiKey ?? requireKey(env, 'ANTHROPIC_API_KEY', agentSpec, '');
    return new AnthropicPolicy({ ...options.anthropic, apiKey, model, envId });
  }
  const factory = spec(envId).agents?.[agentSpec];
  if (factory) return factory(options.seed === undefined ? {} : { seed: options.seed });
  const known = [...GENERIC_AGENTS, ...Object.keys(spec(envId).agents ?? {})];
  throw new ConfigError(`unknown agent '${agentSpec}' for ${envId}; available: ${known.join(', ')}`);
}
