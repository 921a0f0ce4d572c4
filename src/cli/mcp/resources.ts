/**
 * The MCP resources: the trajectory JSON Schema, the domain profiles, the environment specs.
 */
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { getProfile, listProfiles } from '../../core/profiles/index.js';
import { listEnvs, make, spec } from '../../core/registry.js';
import { trajectoryJsonSchema } from '../../core/trajectory.js';

/** The URI of the trajectory JSON Schema. */
export const TRAJECTORY_SCHEMA_URI = 'gymflow://schema/trajectory';

/** A resource's contents as JSON text. */
function json(uri: string, value: unknown): { contents: { uri: string; mimeType: string; text: string }[] } {
  return { contents: [{ uri, mimeType: 'application/json', text: `${JSON.stringify(value, null, 2)}\n` }] };
}

/** One variable of a template match (the SDK gives a list for exploded variables). */
function variable(value: string | string[] | undefined): string {
  return decodeURIComponent(Array.isArray(value) ? value.join('/') : (value ?? ''));
}

/** An environment's spec with its tools and task counts (the environment is made once and closed). */
async function envSpec(id: string): Promise<Record<string, unknown>> {
  const s = spec(id);
  const base = { id: s.id, domain: s.domain, description: s.description, maxEpisodeSteps: s.maxEpisodeSteps ?? null, agents: ['random', ...Object.keys(s.agents ?? {})] };
  let env;
  try {
    env = make(id);
  } catch (err) {
    return { ...base, unavailable: (err as Error).message.split('\n')[0] };
  }
  try {
    return {
      ...base,
      tools: env.tools.map((t) => ({ name: t.name, description: t.description, category: t.category, parameters: t.parameters })),
      trainTasks: env.countTasks?.('train') ?? env.listTasks?.('train').length ?? 0,
      heldoutTasks: env.countTasks?.('heldout') ?? env.listTasks?.('heldout').length ?? 0,
    };
  } finally {
    await env.close();
  }
}

/** Registers the resources on `server`. */
export function registerResources(server: McpServer): void {
  server.registerResource(
    'trajectory-schema',
    TRAJECTORY_SCHEMA_URI,
    { title: 'Trajectory JSON Schema', description: 'The JSON Schema of a gymflow trajectory (one per line in .jsonl files).', mimeType: 'application/json' },
    (uri) => json(uri.href, trajectoryJsonSchema()),
  );

  server.registerResource(
    'domain-profile',
    new ResourceTemplate('gymflow://profiles/{name}', {
      list: () => ({ resources: listProfiles().map((p) => ({ uri: `gymflow://profiles/${p.name}`, name: `profile ${p.name}`, mimeType: 'application/json', description: `the ${p.name} domain profile: tools, terminal tools, outcome rule, rubric weights` })) }),
      complete: { name: (value) => listProfiles().map((p) => p.name).filter((n) => n.startsWith(value)) },
    }),
    { title: 'Domain profile', description: 'A domain profile: its tools and categories, terminal tools, outcome rule, step budget and rubric weights.', mimeType: 'application/json' },
    (uri, vars) => json(uri.href, getProfile(variable(vars['name']))),
  );

  server.registerResource(
    'environment',
    new ResourceTemplate('gymflow://envs/{namespace}/{name}', {
      list: () => ({ resources: listEnvs().map((s) => ({ uri: `gymflow://envs/${s.id}`, name: s.id, mimeType: 'application/json', description: s.description })) }),
    }),
    { title: 'Environment spec', description: "A registered environment: domain, step limit, agents, its tools with their parameters' JSON Schemas, task counts.", mimeType: 'application/json' },
    async (uri, vars) => json(uri.href, await envSpec(`${variable(vars['namespace'])}/${variable(vars['name'])}`)),
  );
}
