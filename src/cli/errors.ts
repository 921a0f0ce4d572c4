import { GymflowError } from '../core/errors.js';

/**
 * Prints an error the way the CLI promises: one readable line on stderr (all schema issues, one per
 * line, when there are several), and the stack only with `--verbose`.
 */
export function reportError(err: unknown, verbose: boolean): void {
  if (verbose && err instanceof Error && err.stack) {
    console.error(err.stack);
    return;
  }
  if (err instanceof GymflowError) console.error(`gymflow: ${err.message}`);
  else if (err instanceof Error) console.error(`gymflow: ${err.message}`);
  else console.error(`gymflow: ${String(err)}`);
}
