import type { Command } from 'commander';
import { listEnvs, make } from '../../core/registry.js';
import { printJson } from '../options.js';
import { formatTable } from '../table.js';

/** `gymflow envs`: the registered environments. */
export function envsCommand(program: Command): void {
  program
    .command('envs')
    .description('list the registered environments')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const rows = [];
      for (const s of listEnvs()) {
        const env = make(s.id);
        try {
          rows.push({
            id: s.id,
            domain: s.domain,
            maxSteps: s.maxEpisodeSteps ?? null,
            tools: env.tools.map((t) => t.name),
            trainTasks: env.countTasks?.('train') ?? env.listTasks?.('train').length ?? 0,
            heldoutTasks: env.countTasks?.('heldout') ?? env.listTasks?.('heldout').length ?? 0,
            agents: ['random', ...Object.keys(s.agents ?? {})],
            description: s.description,
          });
        } finally {
          await env.close();
        }
      }
      if (opts.json) return printJson(rows);
      console.log(
        formatTable(
          rows.map((r) => ({ ...r, tools: r.tools.join(','), agents: r.agents.join(','), tasks: `${r.trainTasks}/${r.heldoutTasks}` })),
          [{ key: 'id' }, { key: 'domain' }, { key: 'maxSteps', header: 'max steps', align: 'right' }, { key: 'tasks', header: 'tasks train/heldout', align: 'right' }, { key: 'agents' }, { key: 'tools' }],
        ),
      );
    });
}
