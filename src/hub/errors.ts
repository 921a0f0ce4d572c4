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
