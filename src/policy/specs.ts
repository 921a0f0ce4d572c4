import type { Agent } from '../core/agent.js';
import { ConfigError } from '../core/errors.js';
import { spec } from '../core/registry.js';
import { AnthropicPolicy, type AnthropicPolicyOptions } from './anthropic.js';
import { LocalPolicy, type LocalPolicyOptions } from './local.js';
import { OpenAIPolicy, type OpenAIPolicyOptions } from './openai.js';
import { RandomAgent } from './random.js';
import { defined } from '../core/defined.js';
import { parseOpenAISpec } from '../core/model-spec.js';

/** Agent specs every environment accepts, besides the ones its registration names (`expert`). */
export const GENERIC_AGENTS = ['random', 'openai:MODEL[@BASE_URL]', 'anthropic:MODEL', 'local:DIR'] as const;

/** Options of {@link resolveAgent}. */
export interface ResolveAgentOptions {
  seed?: number;
  /** Where API keys are read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Overrides for an `openai:` agent (mode, sampling, timeouts, …). */
  openai?: Partial<Omit<OpenAIPolicyOptions, 'model' | 'envId'>>;
  /** Overrides for an `anthropic:` agent. */
  anthropic?: Partial<Omit<AnthropicPolicyOptions, 'model' | 'envId'>>;
  /** Overrides for a `local:` agent (sampling, max new tokens, threads). */
  local?: Partial<Omit<LocalPolicyOptions, 'dir' | 'envId'>>;
}

/** `MODEL[@BASE_URL]` of an `openai:` spec (shared with the simulated users of conversation envs). */
export { parseOpenAISpec } from '../core/model-spec.js';

/** Settings a `local:` spec may carry after `?`, by their query name. */
const LOCAL_SPEC_KEYS = {
  temperature: 'temperature',
  top_p: 'topP',
  max_new_tokens: 'maxNewTokens',
  threads: 'intraOpThreads',
} as const satisfies Record<string, keyof LocalPolicyOptions>;

/**
 * Splits `DIR[?temperature=T&top_p=P&max_new_tokens=N&threads=K]`. The settings travel inside the spec
 * string, so every place that resolves agents from a spec (`collect`, `eval`, `run-episode`, Temporal
 * activities) can set them without options of its own. They override {@link ResolveAgentOptions.local}.
 *
 * @example
 * parseLocalSpec('runs/policy-onnx?temperature=0&max_new_tokens=128');
 * // { dir: 'runs/policy-onnx', options: { temperature: 0, maxNewTokens: 128 } }
 */
export function parseLocalSpec(rest: string): { dir: string; options: Partial<Pick<LocalPolicyOptions, 'temperature' | 'topP' | 'maxNewTokens' | 'intraOpThreads'>> } {
  const q = rest.indexOf('?');
  const dir = (q < 0 ? rest : rest.slice(0, q)).trim();
  if (dir === '') throw new ConfigError(`agent spec 'local:${rest}' names no directory; use local:DIR (the output_dir of export-onnx)`);
  const options: Partial<Record<(typeof LOCAL_SPEC_KEYS)[keyof typeof LOCAL_SPEC_KEYS], number>> = {};
  if (q >= 0) {
    for (const [key, raw] of new URLSearchParams(rest.slice(q + 1))) {
      const field = (LOCAL_SPEC_KEYS as Record<string, (typeof LOCAL_SPEC_KEYS)[keyof typeof LOCAL_SPEC_KEYS]>)[key];
      if (field === undefined) throw new ConfigError(`agent spec 'local:${rest}': unknown setting '${key}' (known: ${Object.keys(LOCAL_SPEC_KEYS).join(', ')})`);
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value)) throw new ConfigError(`agent spec 'local:${rest}': ${key} must be a number, got '${raw}'`);
      options[field] = value;
    }
  }
  return { dir, options };
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
 * - `local:DIR[?temperature=T&top_p=P&max_new_tokens=N&threads=K]`: an ONNX model exported by
 *   `python -m gymflow_trainer export-onnx`, run in-process (`local.ts`, {@link parseLocalSpec}); the
 *   manifest is checked now, the model loads on the first step;
 * - an agent the env registered (`expert`).
 *
 * Throws `ConfigError` for an unknown spec (listing the forms) or a missing key (naming the env var).
 */
export function resolveAgent(agentSpec: string, envId: string, options: ResolveAgentOptions = {}): Agent {
  if (agentSpec === 'random') return new RandomAgent(defined({ seed: options.seed }));
  const env = options.env ?? process.env;
  if (agentSpec.startsWith('openai:')) {
    const { model, baseURL } = parseOpenAISpec(agentSpec.slice('openai:'.length));
    const apiKey = options.openai?.apiKey ?? requireKey(env, 'OPENAI_API_KEY', agentSpec, ' (any value, e.g. EMPTY, for a local vLLM without --api-key)');
    return new OpenAIPolicy({
      ...defined({ seed: options.seed }),
      ...options.openai,
      ...defined({ baseURL }),
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
  if (agentSpec.startsWith('local:')) {
    const { dir, options: fromSpec } = parseLocalSpec(agentSpec.slice('local:'.length));
    return new LocalPolicy({ ...defined({ seed: options.seed }), ...options.local, ...fromSpec, dir, envId });
  }
  const factory = spec(envId).agents?.[agentSpec];
  if (factory) return factory(defined({ seed: options.seed }));
  const known = [...GENERIC_AGENTS, ...Object.keys(spec(envId).agents ?? {})];
  throw new ConfigError(`unknown agent '${agentSpec}' for ${envId}; available: ${known.join(', ')}`);
}
