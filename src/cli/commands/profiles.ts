import type { Command } from 'commander';
import { getProfile, listProfiles, loadProfileFile, normalisedWeights } from '../../core/profiles/index.js';
import { printJson } from '../options.js';
import { formatTable } from '../table.js';

/** `gymflow profiles`: the domain profiles, or one in full, or a check of a profile file. */
export function profilesCommand(program: Command): void {
  const cmd = program.command('profiles').description('domain profiles: tools, terminal tools, outcome rule, rubric weights');
  cmd
    .command('list', { isDefault: true })
    .description('list the known domain profiles')
    .option('--json', 'print JSON')
    .action((opts: { json?: boolean }) => {
      const profiles = listProfiles();
      if (opts.json) return printJson(profiles);
      console.log(
        formatTable(
          profiles.map((p) => ({ name: p.name, tools: p.tools.map((t) => `${t.name}:${t.category}`).join(' '), outcome: p.outcome.rule, budget: p.stepBudget })),
          [{ key: 'name' }, { key: 'outcome' }, { key: 'budget', header: 'step budget', align: 'right' }, { key: 'tools' }],
        ),
      );
    });
  cmd
    .command('show <name>')
    .description('print one profile as a profile file (a starting point for your own: `profiles check` accepts it)')
    .option('--weights', 'print its rubric weights normalised to sum 1 instead')
    .action((name: string, opts: { weights?: boolean }) => {
      const p = getProfile(name);
      printJson(opts.weights ? normalisedWeights(p) : p);
    });
  cmd
    .command('check <file>')
    .description('validate a profile JSON file (every problem with its JSON path)')
    .action((file: string) => {
      const p = loadProfileFile(file);
      console.log(`${file}: valid profile '${p.name}' (${p.tools.length} tools)`);
    });
}
