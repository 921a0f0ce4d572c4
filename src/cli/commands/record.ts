import type { Command } from 'commander';
import { trajectoryJsonSchema } from '../../core/trajectory.js';
import { printJson } from '../options.js';

/** `gymflow record …`: the trajectory format and conversions of agent logs. */
export function recordCommand(program: Command): Command {
  const record = program.command('record').description('the standard trajectory format and agent-log conversion');
  record
    .command('schema')
    .description('print the JSON Schema of a trajectory (one JSON object per line in .jsonl files)')
    .action(() => printJson(trajectoryJsonSchema()));
  return record;
}
