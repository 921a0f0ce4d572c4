import { Command } from 'commander';
import { vi } from 'vitest';

/**
 * Runs `gymflow <args>` in-process against a program holding only `commands`, throwing instead of
 * exiting, and returns what the command printed on stdout (process.stdout writes and console.log).
 */
export async function runCommand(commands: readonly ((program: Command) => unknown)[], ...args: string[]): Promise<string> {
  const program = new Command('gymflow').exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  for (const add of commands) add(program);
  program.commands.forEach((c) => c.exitOverride());
  const chunks: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
    return true;
  });
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => {
    chunks.push(`${parts.map(String).join(' ')}\n`);
  });
  try {
    await program.parseAsync(['node', 'gymflow', ...args]);
  } finally {
    write.mockRestore();
    log.mockRestore();
  }
  return chunks.join('');
}
