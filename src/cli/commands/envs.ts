import type { Command } from 'commander';
import { listEnvs, make } from '../../core/registry.js';
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

/** `gymflow envs`: the registered environments. */
export function envsCommand(program: Command): void {
  program
    .command('envs')
    .description('list the registered environments')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const rows = await environmentRows();
      if (opts.json) return printJson(rows);
      console.log(
        formatTable(
          rows.map((r) => ({ ...r, tools: 'unavailable' in r ? `(unavailable: ${r.unavailable})` : r.tools.join(','), agents: r.agents.join(','), tasks: `${r.trainTasks}/${r.heldoutTasks}` })),
          [{ key: 'id' }, { key: 'domain' }, { key: 'maxSteps', header: 'max steps', align: 'right' }, { key: 'tasks', header: 'tasks train/heldout', align: 'right' }, { key: 'agents' }, { key: 'tools' }],
        ),
      );
    });
}
