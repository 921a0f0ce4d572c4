import type { JudgePrompt } from '../prompt.js';
import { retryAfterFromHeaders, type FailureInfo } from '../retry.js';

/**
 * What the judge needs from a model API: send one request (a first ask or a repair), and say whether a
 * failed request is worth retrying. A provider sends exactly the requests it reports through
 * `onRequest`; retries, repairs, caching and concurrency live in the judge.
 */

/** One reply of the model. `Turn` is the provider's record of the assistant turn, replayed in a repair. */
export interface ProviderReply<Turn = unknown> {
  /** The verdict as a structured value when the API delivered one (Anthropic tool input). */
  value?: unknown;
  /** The reply's text (or the structured value serialised), parsed when `value` is absent. */
  text: string;
  inputTokens: number;
  outputTokens: number;
  /** `stop_reason` / `finish_reason`, for diagnostics. */
  stopReason?: string;
  turn: Turn;
}

/** One request: the prompt, the verdict's JSON Schema, and for a repair the invalid reply and what was wrong. */
export interface ProviderRequest<Turn = unknown> {
  prompt: JudgePrompt;
  schema: Record<string, unknown>;
  repair?: { previous: ProviderReply<Turn>; error: string };
  timeoutMs: number;
  /** Sampling temperature; `null` sends none. Ignored by providers whose API has none. */
  temperature: number | null;
  maxTokens: number;
}

/** A model API the judge can call. */
export interface JudgeProvider<Turn = unknown> {
  /** `anthropic` or `openai` (any OpenAI-compatible server). */
  readonly name: string;
  readonly model: string;
  /** Whether the API takes a temperature (it is then part of the cache key). */
  readonly supportsTemperature: boolean;
  /** Sends the request; calls `onRequest` once per HTTP request it makes. Throws the SDK's error on failure. */
  send(request: ProviderRequest<Turn>, onRequest: () => void): Promise<ProviderReply<Turn>>;
  /** Classifies an error `send` threw. */
  classify(err: unknown): FailureInfo;
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
  if (err instanceof classes.APIConnectionTimeoutError) return { retryable: true, message: `${provider}: request timed out` };
  if (err instanceof classes.APIUserAbortError) return { retryable: false, message: `${provider}: request aborted` };
  if (err instanceof classes.APIConnectionError) return { retryable: true, message: `${provider}: connection error: ${err.message}` };
  if (err instanceof classes.APIError) {
    const { status, headers } = err as Error & { status?: unknown; headers?: { get(name: string): string | null } };
    if (typeof status === 'number') {
      const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
      const retryAfterMs = retryable ? retryAfterFromHeaders(headers) : undefined;
      const auth = status === 401 || status === 403 ? ` (check ${keyHint})` : '';
      return { retryable, status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}), message: `${provider}: HTTP ${err.message}${auth}` };
    }
    return { retryable: false, message: `${provider}: ${err.message}` };
  }
  return { retryable: false, message: `${provider}: ${err instanceof Error ? err.message : String(err)}` };
}
