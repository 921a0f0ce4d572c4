import { defined } from './defined.js';
/**
 * Retries with exponential backoff and jitter, and the classification of model-API SDK errors. The SDK
 * clients (judge and policies) are created with `maxRetries: 0` so that every retry happens here: one
 * policy for every provider, counted in usage, and testable against a loopback server.
 */

/** When and how long to wait between attempts. */
export interface RetryPolicy {
  /** Retries after the first attempt (so at most `maxRetries + 1` requests). */
  maxRetries: number;
  /** Backoff base: attempt k (0-based) waits about `baseDelayMs · 2^k`. */
  baseDelayMs: number;
  /** Cap of one wait, including a server's `retry-after`. */
  maxDelayMs: number;
}

/** The default policy: 4 retries, 0.5 s → 1 s → 2 s → 4 s (± jitter), never more than 20 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 20_000 };

/** How a provider sees a failed request. */
export interface FailureInfo {
  /** 429, 408, 409, 5xx, timeouts and connection errors are retryable; other 4xx are not. */
  retryable: boolean;
  status?: number;
  /** The server's `retry-after-ms` / `retry-after`, in ms. */
  retryAfterMs?: number;
  /** A one-line description for errors and logs. */
  message: string;
}

/**
 * The wait before retry `attempt` (0-based): "equal jitter" — half of `min(maxDelay, base · 2^attempt)`
 * fixed plus up to the other half at random, so simultaneous clients spread out but never retry
 * immediately. A server's `retry-after` raises the wait (capped at `maxDelayMs`), never lowers it.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, retryAfterMs?: number, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const jittered = exp / 2 + random() * (exp / 2);
  return retryAfterMs !== undefined ? Math.max(jittered, Math.min(retryAfterMs, policy.maxDelayMs)) : jittered;
}

/** Hooks of {@link withRetry}, mainly for accounting and tests. */
export interface RetryHooks {
  /** Called before each wait. */
  onRetry?: (failure: FailureInfo, attempt: number, delayMs: number) => void;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** The last failure of {@link withRetry}, with the original error as `cause`. */
export class RetriesExhaustedError extends Error {
  constructor(
    readonly failure: FailureInfo,
    readonly attempts: number,
    options: { cause: unknown },
  ) {
    super(failure.retryable ? `${failure.message} (gave up after ${attempts} attempts)` : failure.message, options);
    this.name = 'RetriesExhaustedError';
  }
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` until it succeeds, a failure is not retryable, or `policy.maxRetries` retries are spent;
 * then throws {@link RetriesExhaustedError} carrying the classified last failure.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, classify: (err: unknown) => FailureInfo, policy: RetryPolicy, hooks: RetryHooks = {}): Promise<T> {
  const sleep = hooks.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      const failure = classify(err);
      if (!failure.retryable || attempt >= policy.maxRetries) throw new RetriesExhaustedError(failure, attempt + 1, { cause: err });
      const delay = backoffDelay(attempt, policy, failure.retryAfterMs, hooks.random);
      hooks.onRetry?.(failure, attempt, delay);
      await sleep(delay);
    }
  }
}

/** Parses `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date) into ms. */
export function retryAfterFromHeaders(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && Number.isFinite(Number.parseFloat(ms))) return Math.max(0, Number.parseFloat(ms));
  const ra = headers.get('retry-after');
  if (ra === null) return undefined;
  const seconds = Number.parseFloat(ra);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(ra);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** A request that did not finish, headers and body, within its deadline ({@link withDeadline}). Retryable. */
export class RequestDeadlineError extends Error {
  constructor(
    readonly deadlineMs: number,
    options?: { cause?: unknown },
  ) {
    super(`request timed out: no complete response within ${deadlineMs} ms`, options);
    this.name = 'RequestDeadlineError';
  }
}

/**
 * Runs `request(signal)` under a deadline on the whole request. The SDKs' own `timeout` stops counting once
 * the response headers arrive, so a server that stalls in the middle of the body would hold the call for
 * ever; here the signal aborts at the deadline and the call rejects with {@link RequestDeadlineError} (even
 * if the request ignored the abort, which is then left to settle on its own).
 *
 * @example
 * ```ts
 * const reply = await withDeadline(30_000, (signal) => client.chat.completions.create(body, { timeout: 30_000, signal }));
 * ```
 */
export async function withDeadline<T>(ms: number, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new RequestDeadlineError(ms));
    }, ms);
  });
  const pending = request(controller.signal);
  try {
    return await Promise.race([pending, expired]);
  } catch (err) {
    if (controller.signal.aborted && !(err instanceof RequestDeadlineError)) throw new RequestDeadlineError(ms, { cause: err });
    throw err;
  } finally {
    clearTimeout(timer);
    pending.catch(() => undefined); // settles after the deadline when it ignored the abort; nobody listens
  }
}

/** The error classes a Stainless-generated SDK (both `openai` and `@anthropic-ai/sdk` are) exports. */
export interface SdkErrorClasses {
  APIError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
}

/**
 * Classifies an SDK error: timeouts, connection errors, 408, 409, 429 and 5xx are retryable (with the
 * server's `retry-after` when given); an abort and every other status are not. `keyHint` names the
 * env var to check on 401/403.
 */
export function classifySdkError(err: unknown, classes: SdkErrorClasses, provider: string, keyHint: string): FailureInfo {
  if (err instanceof RequestDeadlineError) return { retryable: true, message: `${provider}: ${err.message}` };
  if (err instanceof classes.APIConnectionTimeoutError) return { retryable: true, message: `${provider}: request timed out` };
  if (err instanceof classes.APIUserAbortError) return { retryable: false, message: `${provider}: request aborted` };
  if (err instanceof classes.APIConnectionError) return { retryable: true, message: `${provider}: connection error: ${err.message}` };
  if (err instanceof classes.APIError) {
    const { status, headers } = err as Error & { status?: unknown; headers?: { get(name: string): string | null } };
    if (typeof status === 'number') {
      const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
      const retryAfterMs = retryable ? retryAfterFromHeaders(headers) : undefined;
      const auth = status === 401 || status === 403 ? ` (check ${keyHint})` : '';
      return { retryable, status, ...defined({ retryAfterMs }), message: `${provider}: HTTP ${err.message}${auth}` };
    }
    return { retryable: false, message: `${provider}: ${err.message}` };
  }
  return { retryable: false, message: `${provider}: ${err instanceof Error ? err.message : String(err)}` };
}
