import type { JudgeUsage } from '../types.js';

/** Prices in US dollars per million tokens; set them from the provider's price list for your model. */
export interface JudgePrices {
  inputPerMTok: number;
  outputPerMTok: number;
}

/** {@link JudgeUsage} plus how often the judge retried and repaired. */
export interface JudgeRunUsage extends JudgeUsage {
  /** Requests repeated after a 429/5xx/timeout/connection error (included in `requests`). */
  retries: number;
  /** Repair requests sent after an invalid reply (included in `requests`). */
  repairs: number;
}

/**
 * Counts a judge's requests, tokens and failures. Semantics:
 * - `requests`: HTTP requests sent, including retries, repairs and the OpenAI json_object fallback.
 * - `cacheHits`: steps answered from the cache (no request).
 * - `inputTokens` / `outputTokens`: summed from each successful response's `usage` (a server that
 *   reports no usage counts 0).
 * - `costUsd`: tokens × configured prices, computed from the totals; 0 without prices.
 * - `failures`: steps that got no verdict (invalid after the repair, or the API failed after retries).
 */
export class UsageMeter {
  private requests = 0;
  private cacheHits = 0;
  private inputTokens = 0;
  private outputTokens = 0;
  private failures = 0;
  private retries = 0;
  private repairs = 0;

  constructor(private readonly prices?: JudgePrices) {}

  /** One HTTP request is about to be sent. */
  request(): void {
    this.requests++;
  }

  /** A response's token usage. */
  tokens(input: number, output: number): void {
    this.inputTokens += input;
    this.outputTokens += output;
  }

  /** A step answered from the cache. */
  cacheHit(): void {
    this.cacheHits++;
  }

  /** A step left without a verdict. */
  failure(): void {
    this.failures++;
  }

  /** A retry after a transient error. */
  retry(): void {
    this.retries++;
  }

  /** A repair request after invalid output. */
  repair(): void {
    this.repairs++;
  }

  /** The totals so far. */
  snapshot(): JudgeRunUsage {
    const costUsd = this.prices ? (this.inputTokens * this.prices.inputPerMTok + this.outputTokens * this.prices.outputPerMTok) / 1_000_000 : 0;
    return {
      requests: this.requests,
      cacheHits: this.cacheHits,
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      costUsd,
      failures: this.failures,
      retries: this.retries,
      repairs: this.repairs,
    };
  }
}
