import { ownedSandboxIds, removeOwnedSandboxes } from '../sandbox/lifetime.js';
import { reportError } from './errors.js';
import { buildProgram, commandName, COMMANDS } from './program.js';

/** How long an interrupted command may spend removing the sandbox containers it created. */
const SIGNAL_CLEANUP_MS = 10_000;
/** Exit statuses after a signal (128 + its number), as a shell reports them. */
const SIGNAL_EXIT: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };
/** Set once a signal began the shutdown: the command's own error (its sandbox vanished) is not reported. */
let interrupted = false;

/**
 * SIGINT / SIGTERM / SIGHUP: remove the sandbox containers this process created (the active one and the warm
 * pool's spares; at most {@link SIGNAL_CLEANUP_MS}), then exit 130 / 143 / 129; a second signal exits at once. Commands
 * that handle a signal themselves (`collect` finishes its episodes in flight on the first Ctrl-C; `dev`,
 * `demo` stop their stacks) keep their shutdown, which closes their environments: removing the containers
 * under them would fail the very episodes they are finishing. Once such a command lets go of the signal (the
 * second Ctrl-C), this handler applies.
 */
function handleSignals(): void {
  const onSignal = (signal: NodeJS.Signals): void => {
    const code = SIGNAL_EXIT[signal] ?? 1;
    if (process.listeners(signal).some((l) => l !== onSignal)) return;
    if (interrupted) process.exit(code);
    interrupted = true;
    // After SIGHUP the terminal is gone: writing to it could fail (EIO) before the containers are removed.
    const say = (text: string): void => void (signal !== 'SIGHUP' && process.stderr.write(text));
    const ids = ownedSandboxIds();
    if (ids.length > 0) say(`gymflow: ${signal}: removing ${ids.length} sandbox container${ids.length === 1 ? '' : 's'} (again to exit now)\n`);
    void removeOwnedSandboxes(SIGNAL_CLEANUP_MS).then(({ left }) => {
      if (left.length > 0) say(`gymflow: could not remove sandbox containers ${left.map((id) => id.slice(0, 12)).join(', ')}; \`gymflow sandbox gc\` removes them\n`);
      process.exit(code);
    });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal); // the terminal closed
}

async function main(): Promise<void> {
  handleSignals();
  // A reader that went away (`gymflow … | head`) ends the command quietly, as it ends any Unix tool; what was
  // already written to files is complete (they are written atomically).
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    reportError(err, process.argv.includes('--verbose'));
    process.exit(1);
  });
  const args = process.argv.slice(2);
  // The built-in environments, for the commands (not for `--help`: loading them is a third of its start-up; not
  // for `envs`, which lists them from the build's listing).
  const entry = COMMANDS.find((c) => c.name === commandName(args));
  if (entry !== undefined && entry.registersEnvs !== true) (await import('../envs/register.js')).registerBuiltinEnvs();
  await (await buildProgram(args)).parseAsync(process.argv);
}

main().catch((err: unknown) => {
  // After a signal the command fails because its sandbox was removed under it: the signal handler exits.
  if (interrupted) return;
  reportError(err, process.argv.includes('--verbose'));
  process.exit(1);
});
