import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, commandName, COMMANDS } from './program.js';

/** Commander's help without exiting. */
function help(program: Command): string {
  return program.helpInformation();
}

describe('the command tree', { timeout: 60_000 }, () => {
  it('lists every command as its module defines it: name, term and description, in order', async () => {
    const full = await buildProgram();
    expect(full.commands.map((c) => c.name())).toEqual(COMMANDS.map((c) => c.name));
    for (const c of full.commands) {
      const entry = COMMANDS.find((e) => e.name === c.name());
      expect(entry?.description).toBe(c.description());
      expect(entry?.term).toBe(full.createHelp().subcommandTerm(c));
    }
    // The help of `gymflow --help` (commands by name only) is the help of the program with all of them loaded.
    expect(help(await buildProgram(['--help']))).toBe(help(full));
    expect(help(await buildProgram(['--help']))).toContain('envs [options]');
  });

  it('loads only the command a command line runs', async () => {
    const program = await buildProgram(['--verbose', 'compare', 'a.json', 'b.json']);
    expect(program.commands.map((c) => c.name())).toEqual(['compare']);
    expect((await buildProgram(['help', 'reward'])).commands.map((c) => c.name())).toEqual(['reward']);
    // A mistyped command: all of them by name, so that commander can suggest one.
    expect((await buildProgram(['evl'])).commands).toHaveLength(COMMANDS.length);
  });

  it('finds the command: the first word that is not an option, or the one after help', () => {
    expect(commandName(['envs', '--json'])).toBe('envs');
    expect(commandName(['--verbose', 'reward', 'score', 'x.jsonl'])).toBe('reward');
    expect(commandName(['help', 'collect'])).toBe('collect');
    expect(commandName(['help'])).toBe('help');
    expect(commandName(['--help'])).toBeUndefined();
    expect(commandName([])).toBeUndefined();
  });
});
