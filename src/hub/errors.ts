import { GymflowError } from '../core/errors.js';

/**
 * A problem with the artifact store: an unknown ref or name, a bad ref name, a missing or corrupt
 * object. The message names the store root and the ref or path involved.
 */
export class StoreError extends GymflowError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE_ERROR', message, options);
  }
}

/** An export that cannot be produced as asked (bad split spec, output exists, no input). */
export class ExportError extends GymflowError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('EXPORT_ERROR', message, options);
  }
}

/**
 * A ref update that lost to another writer (docs/store.md, "Refs"): the name did not hold what the update expected
 * (`expected`), because another writer moved, created or was moving it. Nothing was overwritten; `actual` is what
 * the name holds now (`undefined`: no target). Re-read and decide, or pass `--force` where a command offers it.
 */
export class RefConflictError extends StoreError {
  constructor(
    message: string,
    readonly refName: string,
    readonly expected: string | null | undefined,
    readonly actual: string | undefined,
  ) {
    super(message);
  }
}
