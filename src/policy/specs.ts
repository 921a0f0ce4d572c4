import type { Agent } from '../core/agent.js';
import { ConfigError } from '../core/errors.js';
import { spec } from '../core/registry.js';
import { RandomAgent } from './random.js';

/** Agent specs every environment accepts, besides the ones its registration names (`expert`). */
export const GENERIC_AGENTS = ['random'] as const;

/**
 * Builds an agent from a spec string for an environment: `random` (any env), or an agent the env
 * registered (`expert`). Later specs (`local:DIR`, `openai:MODEL[@URL]`, `anthropic:MODEL`) extend this.
 */
export function resolveAgent(agentSpec: string, envId: string, options: { seed?: number } = {}): Agent {
  if (agentSpec === 'random') return new RandomAgent(options.seed === undefined ? {} : { seed: options.seed });
  const factory = spec(envId).agents?.[agentSpec];
  if (factory) return factory(options);
  const known = [...GENERIC_AGENTS, ...Object.keys(spec(envId).agents ?? {})];
  throw new ConfigError(`unknown agent '${agentSpec}' for ${envId}; available: ${known.join(', ')}`);
}
