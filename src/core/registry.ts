import type { AgentFactory } from './agent.js';
import { RegistryError } from './errors.js';
import type { AgentEnv, ToolSpec } from './types.js';
import { MaxSteps } from './wrappers/max-steps.js';
import { OrderEnforcing } from './wrappers/order-enforcing.js';

/** `namespace/name-vN`, e.g. `gymflow/sandbox-v0`. */
export const ENV_ID_PATTERN = /^([a-z0-9][a-z0-9_.-]*)\/([a-z0-9][a-z0-9_.-]*?)-v(\d+)$/;

/** What `register` records about an environment besides how to build it. */
export interface EnvSpec {
  id: string;
  /** The domain profile name (`coding`, `math`, …). */
  domain: string;
  description: string;
  /** Step limit applied by `make` (truncates with reason `max_steps`); omit for none. */
  maxEpisodeSteps?: number;
  /** Default keyword arguments passed to the factory; `make` overrides merge over them. */
  kwargs?: Record<string, unknown>;
  /**
   * Agents that know this environment, by name (`expert` for the scripted solver). Generic agents such
   * as `random` need no entry here.
   */
  agents?: Record<string, AgentFactory>;
  /**
   * The environment's tools, for one that cannot be made without keyword arguments (a question set's path) but whose
   * tools do not depend on them: what renders its trajectories' prompts (`registryToolLookup`) reads them from here.
   */
  tools?: readonly ToolSpec[];
}

/** Builds an unwrapped environment from keyword arguments. Heavy work belongs in `reset`, not here. */
export type EnvFactory = (kwargs: Record<string, unknown>) => AgentEnv;

/** Overrides accepted by {@link make}. */
export interface MakeOptions {
  /** Replaces the spec's step limit; `null` disables it. */
  maxEpisodeSteps?: number | null;
  /** Skips the order-enforcing wrapper (for env authors debugging raw behaviour). */
  disableOrderEnforcing?: boolean;
  /** Keyword arguments for the factory, merged over the spec's `kwargs`. */
  kwargs?: Record<string, unknown>;
}

interface Entry {
  factory: EnvFactory;
  spec: Readonly<EnvSpec>;
}

const registry = new Map<string, Entry>();

/** Throws a {@link RegistryError} unless `id` has the form `namespace/name-vN`. */
export function parseEnvId(id: string): { namespace: string; name: string; version: number } {
  const m = ENV_ID_PATTERN.exec(id);
  if (!m) {
    throw new RegistryError(
      `invalid environment id '${id}': expected namespace/name-vN (lower case), e.g. 'gymflow/sandbox-v0'`,
    );
  }
  return { namespace: m[1] as string, name: m[2] as string, version: Number(m[3]) };
}

/**
 * Registers an environment. Registering an id twice is an error unless `{ replace: true }` is given.
 *
 * @example
 * ```ts
 * register('acme/maze-v0', (kw) => new MazeEnv(kw), { domain: 'generic', description: 'A text maze', maxEpisodeSteps: 50 });
 * const env = make('acme/maze-v0');
 * ```
 */
export function register(
  id: string,
  factory: EnvFactory,
  spec: Omit<EnvSpec, 'id'>,
  options: { replace?: boolean } = {},
): void {
  parseEnvId(id);
  if (spec.maxEpisodeSteps !== undefined && (!Number.isInteger(spec.maxEpisodeSteps) || spec.maxEpisodeSteps <= 0)) {
    throw new RegistryError(`register('${id}'): maxEpisodeSteps must be a positive integer, got ${spec.maxEpisodeSteps}`);
  }
  if (registry.has(id) && !options.replace) {
    throw new RegistryError(`environment '${id}' is already registered; pass { replace: true } to replace it`);
  }
  // Frozen with its two records (their values, such as a warm pool passed in kwargs, stay live objects), so
  // a caller of `spec()` cannot change what every later `make` gets.
  const frozen: EnvSpec = { ...spec, id };
  if (spec.kwargs) frozen.kwargs = Object.freeze({ ...spec.kwargs });
  if (spec.agents) frozen.agents = Object.freeze({ ...spec.agents });
  registry.set(id, { factory, spec: Object.freeze(frozen) });
}

/** Removes a registration (mainly for tests); returns whether it existed. */
export function unregister(id: string): boolean {
  return registry.delete(id);
}

/** The spec of a registered environment. */
export function spec(id: string): Readonly<EnvSpec> {
  return lookup(id).spec;
}

/**
 * Whether `id` is registered. Cheaper than searching {@link listEnvs}, whose sort by `localeCompare` loads the
 * collator (~20 ms at a process's first use): the registering functions ask this at every command's start.
 */
export function isRegistered(id: string): boolean {
  return registry.has(id);
}

/** Every registered spec, sorted by id. */
export function listEnvs(): Readonly<EnvSpec>[] {
  return [...registry.values()].map((e) => e.spec).sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * Builds a registered environment, wrapped in the spec's step limit and order enforcement (outermost),
 * so every environment from `make` follows the protocol.
 */
export function make(id: string, options: MakeOptions = {}): AgentEnv {
  const { factory, spec: s } = lookup(id);
  let env = factory({ ...s.kwargs, ...options.kwargs });
  const limit = options.maxEpisodeSteps === undefined ? s.maxEpisodeSteps : options.maxEpisodeSteps;
  if (limit !== undefined && limit !== null) env = new MaxSteps(env, limit);
  if (!options.disableOrderEnforcing) env = new OrderEnforcing(env);
  return env;
}

function lookup(id: string): Entry {
  parseEnvId(id);
  const entry = registry.get(id);
  if (entry) return entry;
  const { namespace, name } = parseEnvId(id);
  const similar = [...registry.keys()].filter((k) => {
    const p = parseEnvId(k);
    return p.namespace === namespace && p.name === name;
  });
  const hint = similar.length
    ? `; other versions: ${similar.join(', ')}`
    : `; registered: ${[...registry.keys()].sort().join(', ') || '(none)'}`;
  throw new RegistryError(`environment '${id}' is not registered${hint}`);
}
