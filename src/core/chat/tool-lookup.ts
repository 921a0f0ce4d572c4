import { listEnvs, make } from '../registry.js';
import type { Trajectory } from '../trajectory.js';
import type { ToolSpec } from '../types.js';
import type { PromptTool } from './prompt.js';

/** Finds an environment's tools by id (`undefined` when unknown). */
export type ToolLookup = (envId: string) => readonly ToolSpec[] | undefined;

/**
 * The tools to describe for a trajectory: `lookup(envId)` (the registered env's tools) when it knows
 * the env, else one schemaless entry per tool name the trajectory used.
 */
export function toolsFor(t: Trajectory, lookup: ToolLookup | undefined): readonly PromptTool[] {
  const known = lookup?.(t.envId);
  if (known) return known;
  const names = [...new Set(t.steps.map((s) => s.action.tool))];
  return names.map((name) => ({ name, description: '', parameters: { type: 'object' } }));
}

/**
 * A {@link ToolLookup} backed by the environment registry: the tools of a registered env (its spec's `tools`, else
 * built once with `make`, then closed), `undefined` for an id that is not registered.
 */
export function registryToolLookup(): ToolLookup {
  const cache = new Map<string, readonly ToolSpec[] | undefined>();
  return (envId) => {
    if (!cache.has(envId)) {
      let tools: readonly ToolSpec[] | undefined;
      const registered = listEnvs().find((s) => s.id === envId);
      if (registered?.tools !== undefined) tools = registered.tools;
      else if (registered !== undefined) {
        const env = make(envId);
        tools = env.tools;
        // close() is idempotent and cheap before reset; nothing to wait for.
        void env.close().catch(() => undefined);
      }
      cache.set(envId, tools);
    }
    return cache.get(envId);
  };
}
