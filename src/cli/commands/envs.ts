import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { isErrno } from '../../core/fs.js';
import { listEnvs, make } from '../../core/registry.js';
import { OPENENV_VARIABLE } from '../../envs/openenv/variable.js';
import type { AgentEnv } from '../../core/types.js';
import { printJson } from '../options.js';
import { formatTable } from '../table.js';

/** One registered environment as `gymflow envs` lists it. */
export interface EnvironmentRow {
  id: string;
  domain: string;
  maxSteps: number | null;
  agents: string[];
  description: string;
  tools: string[];
  trainTasks: number;
  heldoutTasks: number;
  /** Why it cannot be made here (an OpenEnv server's address missing, or its server down). */
  unavailable?: string;
}

/** The registered environments: spec, tools and task counts (each made once and closed). */
export async function environmentRows(): Promise<EnvironmentRow[]> {
  const rows: EnvironmentRow[] = [];
  for (const s of listEnvs()) {
    const row = { id: s.id, domain: s.domain, maxSteps: s.maxEpisodeSteps ?? null, agents: ['random', ...Object.keys(s.agents ?? {})], description: s.description };
    let env: AgentEnv;
    try {
      env = make(s.id);
    } catch (err) {
      // An environment that cannot be built without more (an OpenEnv server's address, or its server is down)
      // is listed with the reason, not in place of the others.
      rows.push({ ...row, tools: [], trainTasks: 0, heldoutTasks: 0, unavailable: (err as Error).message.split('\n')[0] as string });
      continue;
    }
    try {
      rows.push({
        ...row,
        tools: env.tools.map((t) => t.name),
        trainTasks: env.countTasks?.('train') ?? env.listTasks?.('train').length ?? 0,
        heldoutTasks: env.countTasks?.('heldout') ?? env.listTasks?.('heldout').length ?? 0,
      });
    } finally {
      await env.close();
    }
  }
  return rows;
}

/**
 * The rows of the built-in environments as the build computed them: `scripts/env-listing.mjs`, run by
 * `scripts/build.sh`, registers them and writes {@link environmentRows} here, beside the built module (the sources
 * have none). `gymflow envs` prints them without importing an environment (importing and making them all was most
 * of its start-up: bench/cli-startup.ts); tests/cli.test.ts checks them against the environments themselves.
 */
export const ENV_LISTING_FILE = new URL('./envs-listing.json', import.meta.url);

/**
 * The build's rows (`file`, default {@link ENV_LISTING_FILE}), when they are what {@link environmentRows} would say in this process:
 * there is a listing (a build) and {@link OPENENV_VARIABLE} names no server (its servers are registered and described only
 * at run time). Undefined otherwise.
 */
export function builtListing(env: Record<string, string | undefined> = process.env, file: URL | string = ENV_LISTING_FILE): EnvironmentRow[] | undefined {
  if ((env[OPENENV_VARIABLE] ?? '').trim() !== '') return undefined;
  const path = file instanceof URL ? fileURLToPath(file) : file;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
  let listing: { rows?: unknown } | null;
  try {
    listing = JSON.parse(text) as { rows?: unknown } | null;
  } catch (err) {
    throw new Error(`${path}: not JSON (${(err as Error).message}): rebuild with \`npm run build\``);
  }
  if (!Array.isArray(listing?.rows)) throw new Error(`${path}: $.rows: not an array of rows: rebuild with \`npm run build\``);
  return listing.rows as EnvironmentRow[];
}

/** The registered environments of a `gymflow` process: the built-in ones and those of {@link OPENENV_VARIABLE}. */
async function cliEnvironmentRows(): Promise<EnvironmentRow[]> {
  const built = builtListing();
  if (built !== undefined) return built;
  (await import('../../envs/register.js')).registerBuiltinEnvs();
  return environmentRows();
}

/** `gymflow envs`: the registered environments. */
export function envsCommand(program: Command): void {
  program
    .command('envs')
    .description('list the registered environments')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const rows = await cliEnvironmentRows();
      if (opts.json) return printJson(rows);
      console.log(
        formatTable(
          rows.map((r) => ({ ...r, tools: 'unavailable' in r ? `(unavailable: ${r.unavailable})` : r.tools.join(','), agents: r.agents.join(','), tasks: `${r.trainTasks}/${r.heldoutTasks}` })),
          [{ key: 'id' }, { key: 'domain' }, { key: 'maxSteps', header: 'max steps', align: 'right' }, { key: 'tasks', header: 'tasks train/heldout', align: 'right' }, { key: 'agents' }, { key: 'tools' }],
        ),
      );
    });
}
