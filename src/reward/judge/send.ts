import { RetriesExhaustedError, withRetry, type RetryHooks, type RetryPolicy } from '../../core/retry.js';
import { JudgeError } from './errors.js';
import type { JudgeProvider, ProviderReply, ProviderRequest } from './providers/provider.js';
import type { UsageMeter } from './usage.js';
import { defined } from '../../core/defined.js';

/** What {@link sendMetered} sends through: a judge's provider, its meter and its retry policy. */
export interface MeteredSender {
  provider: JudgeProvider;
  meter: UsageMeter;
  retryPolicy: RetryPolicy;
  retryHooks: Pick<RetryHooks, 'sleep' | 'random'>;
}

/**
 * Sends one judge request with the provider's retries (429/5xx/timeouts, `retry-after` honoured), counting
 * requests, retries, tokens and failures on the meter. A request that exhausts its retries or is refused becomes a
 * {@link JudgeError} whose message starts with `where` (the judge's name, and what it was asking).
 */
export async function sendMetered(judge: MeteredSender, request: ProviderRequest, where: string): Promise<ProviderReply> {
  try {
    const reply = await withRetry(
      () => judge.provider.send(request, () => judge.meter.request()),
      (err) => judge.provider.classify(err),
      judge.retryPolicy,
      { ...judge.retryHooks, onRetry: () => judge.meter.retry() },
    );
    judge.meter.tokens(reply.inputTokens, reply.outputTokens);
    return reply;
  } catch (err) {
    judge.meter.failure();
    if (err instanceof RetriesExhaustedError) {
      throw new JudgeError(`${where}: ${err.message}`, { cause: err.cause, ...defined({ status: err.failure.status }) });
    }
    throw err;
  }
}
