import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerBuiltinEnvs } from '../envs/index.js';
import { collectCommand } from './commands/collect.js';
import { compareCommand } from './commands/compare.js';
import { demoCommand } from './commands/demo.js';
import { devCommand } from './commands/dev.js';
import { envsCommand } from './commands/envs.js';
import { evalCommand } from './commands/eval.js';
import { exportCommand } from './commands/export.js';
import { pipelineCommand } from './commands/pipeline.js';
import { profilesCommand } from './commands/profiles.js';
import { recordCommand } from './commands/record.js';
import { runEpisodeCommand } from './commands/run-episode.js';
import { rewardCommand } from './commands/reward.js';
import { sandboxCommand } from './commands/sandbox.js';
import { storeCommand } from './commands/store.js';
import { reportError } from './errors.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The `gymflow` command tree. */
export function buildProgram(): Command {
  const program = new Command('gymflow')
    .description('Train tool-using LLM agents with reinforcement learning')
    .version(pkg.version)
    .option('--verbose', 'print stack traces on errors')
    .showHelpAfterError('(run with --help for usage)');
  envsCommand(program);
  runEpisodeCommand(program);
  recordCommand(program);
  profilesCommand(program);
  rewardCommand(program);
  sandboxCommand(program);
  collectCommand(program);
  exportCommand(program);
  storeCommand(program);
  evalCommand(program);
  compareCommand(program);
  demoCommand(program);
  devCommand(program);
  pipelineCommand(program);
  return program;
}

async function main(): Promise<void> {
  // A reader that went away (`gymflow … | head`) ends the command quietly, as it ends any Unix tool; what was
  // already written to files is complete (they are written atomically).
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    reportError(err, process.argv.includes('--verbose'));
    process.exit(1);
  });
  registerBuiltinEnvs();
  await buildProgram().parseAsync(process.argv);
}

main().catch((err: unknown) => {
  reportError(err, process.argv.includes('--verbose'));
  process.exit(1);
});
