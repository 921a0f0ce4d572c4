import { GymflowError } from '../core/errors.js';

/** How deep {@link fullMessage} follows an error's causes. */
const MAX_CAUSES = 5;

/**
 * An error's message with the reasons its causes give, joined by `: `. The Temporal client's errors say only
 * what failed (`Failed to start Workflow`); the server's reason (`Namespace default has no mapping defined
 * for search attribute GymflowExperiment`) is in the gRPC error they wrap, as its `details`. A cause whose
 * reason the text already holds adds nothing.
 */
export function fullMessage(err: unknown): string {
  let text = err instanceof Error ? err.message : String(err);
  let cause = err instanceof Error ? err.cause : undefined;
  for (let depth = 0; cause !== undefined && cause !== null && depth < MAX_CAUSES; depth++) {
    const details = (cause as { details?: unknown }).details;
    const reason = typeof details === 'string' && details !== '' ? details : cause instanceof Error ? cause.message : String(cause);
    if (reason !== '' && !text.includes(reason)) text = text === '' ? reason : `${text}: ${reason}`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return text;
}

/**
 * Prints an error the way the CLI promises: one readable line on stderr (all schema issues, one per
 * line, when there are several), with the reasons of the errors it wraps, and the stack only with
 * `--verbose`.
 */
export function reportError(err: unknown, verbose: boolean): void {
  if (verbose && err instanceof Error && err.stack) {
    console.error(err.stack);
    return;
  }
  console.error(`gymflow: ${err instanceof GymflowError ? err.message : fullMessage(err)}`);
}
