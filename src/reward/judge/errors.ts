import { GymflowError } from '../../core/errors.js';

/**
 * The LLM judge could not produce a verdict: the API failed after every retry, refused the request
 * (a 4xx other than 408/409/429), or answered with output that stayed invalid after the repair retry.
 * `status` is the last HTTP status when there was one.
 */
export class JudgeError extends GymflowError {
  /** The last HTTP status, if the failure came from an HTTP response. */
  readonly status: number | undefined;

  constructor(message: string, options: { cause?: unknown; status?: number } = {}) {
    super('JUDGE_ERROR', message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.status = options.status;
  }
}
