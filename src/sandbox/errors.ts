import { GymflowError } from '../core/errors.js';

/**
 * A sandbox problem no retry inside the same call can fix: the engine is unreachable, the image is missing,
 * a container could not be created or died. `code` is `SANDBOX_ERROR` (or a more specific `SANDBOX_*`).
 */
export class SandboxError extends GymflowError {
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(options?.code ?? 'SANDBOX_ERROR', message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}
