import type { DomainProfile } from '../../core/profiles/profile.js';
import type { Trajectory } from '../../core/trajectory.js';
import type { JudgeLayer, RubricDefinition, RubricResult, StepJudgement } from '../types.js';
import { JudgeCache, judgeCacheKey } from './cache.js';
import { JudgeError } from './errors.js';
import { sendMetered } from './send.js';
import { judgeJsonSchema, parseVerdict } from './output.js';
import { buildStepPrompt, DEFAULT_PROMPT_LIMITS, JUDGE_PROMPT_VERSION, type JudgePrompt, type PromptLimits } from './prompt.js';
import type { JudgeProvider, ProviderReply } from './providers/provider.js';
import { DEFAULT_RETRY_POLICY, type RetryHooks, type RetryPolicy } from '../../core/retry.js';
import { Semaphore } from './semaphore.js';
import { UsageMeter, type JudgePrices, type JudgeRunUsage } from './usage.js';
import { defined } from '../../core/defined.js';

/** Options of {@link LlmJudge} (see `createJudge` for the validated, user-facing configuration). */
export interface LlmJudgeOptions {
  /** Requests in flight at once across every `judge()` call of this judge (default 4). */
  concurrency?: number;
  /** Per-request timeout in ms (default 60 000); a timeout is retried like a 5xx. */
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** Verdict cache; default: a fresh in-memory cache. */
  cache?: JudgeCache;
  prices?: JudgePrices;
  limits?: PromptLimits;
  /** Sampling temperature (default 0; `null` sends none). Ignored by APIs without one (Anthropic). */
  temperature?: number | null;
  /** Output token limit per request (default 1024). */
  maxTokens?: number;
  /**
   * What to do with a step whose reply is still invalid after the repair retry: `skip` (default) leaves
   * the step without a judge verdict and counts a failure; `throw` rejects `judge()` with a {@link JudgeError}.
   * API failures (after retries) always reject.
   */
  onInvalid?: 'skip' | 'throw';
  /** Overrides of the retry loop's sleep and randomness (tests). */
  retryHooks?: Pick<RetryHooks, 'sleep' | 'random'>;
  /** What this judge may spend; see {@link JudgeBudget}. */
  budget?: JudgeBudget;
}

/**
 * A judge's spending limit. `calls`: HTTP requests, retries and repairs included; `tokens`: input + output tokens.
 * Checked before each step's first request: once either is reached, the steps not yet asked get no verdict (they
 * score without the judge) and {@link LlmJudge.budget} says so. Steps in flight finish, so a limit can be passed
 * by the requests in flight; verdicts from the cache cost nothing.
 */
export interface JudgeBudget {
  calls?: number | undefined;
  tokens?: number | undefined;
}

/** Where a judge stands against its {@link JudgeBudget}. */
export interface JudgeBudgetStatus {
  /** Whether a step went unasked because the budget was spent. */
  exhausted: boolean;
  /** Steps left without a verdict for that reason. */
  skippedSteps: number;
}

/**
 * The LLM-as-judge layer: scores every step of a trajectory on a set of rubrics, one request per step.
 *
 * Per step: render the prompt (task, tools, the last k steps truncated, the step) → look up the cache
 * (key: provider, model, prompt version, temperature, rubric set, hash of the rendered input) → else,
 * under the concurrency bound, send the request with retries (exponential backoff + jitter on
 * 429/408/409/5xx/timeouts/connection errors), validate the verdict with zod, and if it is invalid send
 * ONE repair request that quotes the validation error → cache the valid verdict.
 *
 * @example
 * ```ts
 * const judge = createJudge({ provider: 'anthropic', model: 'claude-haiku-4-5', cachePath: '.gymflow/judge-cache.jsonl' });
 * const verdicts = await judge.judge(trajectory, profile, weightedJudgeRubrics(profile));
 * console.log(judge.usage()); // { requests, cacheHits, inputTokens, outputTokens, costUsd, failures, retries, repairs }
 * ```
 */
export class LlmJudge implements JudgeLayer {
  readonly name: string;
  private readonly semaphore: Semaphore;
  private readonly meter: UsageMeter;
  private readonly cache: JudgeCache;
  private readonly inflight = new Map<string, Promise<Record<string, RubricResult> | undefined>>();
  private readonly timeoutMs: number;
  private readonly retryPolicy: RetryPolicy;
  private readonly limits: PromptLimits;
  private readonly temperature: number | null;
  private readonly maxTokens: number;
  private readonly onInvalid: 'skip' | 'throw';
  private readonly retryHooks: Pick<RetryHooks, 'sleep' | 'random'>;
  private readonly limit: JudgeBudget;
  /** Steps whose first request was sent or is about to be (each costs one call before retries and repairs). */
  private asked = 0;
  private skippedSteps = 0;

  constructor(
    private readonly provider: JudgeProvider,
    options: LlmJudgeOptions = {},
  ) {
    this.name = `judge:${provider.name}:${provider.model}`;
    this.semaphore = new Semaphore(options.concurrency ?? 4);
    this.meter = new UsageMeter(options.prices);
    this.cache = options.cache ?? new JudgeCache();
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retryPolicy = options.retry ?? DEFAULT_RETRY_POLICY;
    this.limits = options.limits ?? DEFAULT_PROMPT_LIMITS;
    this.temperature = provider.supportsTemperature ? (options.temperature === undefined ? 0 : options.temperature) : null;
    this.maxTokens = options.maxTokens ?? 1024;
    this.onInvalid = options.onInvalid ?? 'skip';
    this.retryHooks = options.retryHooks ?? {};
    this.limit = options.budget ?? {};
  }

  /** Whether the budget stopped the judge, and how many steps went unasked. */
  budget(): JudgeBudgetStatus {
    return { exhausted: this.skippedSteps > 0, skippedSteps: this.skippedSteps };
  }

  /** Whether the budget is spent: calls committed (first requests, retries, repairs) or tokens used. */
  private spent(): boolean {
    const u = this.meter.snapshot();
    if (this.limit.calls !== undefined && this.asked + u.retries + u.repairs >= this.limit.calls) return true;
    return this.limit.tokens !== undefined && u.inputTokens + u.outputTokens >= this.limit.tokens;
  }

  /**
   * Scores every step on `rubrics`. Steps are judged concurrently (within the bound); the result is in
   * step order and leaves out steps that got no verdict (see `onInvalid`). No rubrics → no requests.
   */
  async judge(trajectory: Trajectory, profile: DomainProfile, rubrics: readonly RubricDefinition[]): Promise<StepJudgement[]> {
    if (rubrics.length === 0 || trajectory.steps.length === 0) return [];
    const names = rubrics.map((r) => r.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined) throw new JudgeError(`rubric '${dup}' appears twice in the rubric set`);
    const schema = judgeJsonSchema(rubrics);
    const results = await Promise.all(
      trajectory.steps.map(async (step, position) => {
        const prompt = buildStepPrompt(trajectory, position, profile, rubrics, this.limits);
        const verdict = await this.judgeStep(prompt, rubrics, schema, `${trajectory.id} step ${step.index}`);
        return verdict ? { stepIndex: step.index, rubrics: verdict } : undefined;
      }),
    );
    return results.filter((r): r is StepJudgement => r !== undefined);
  }

  /** Requests, cache hits, tokens, cost, failures, retries and repairs so far. */
  usage(): JudgeRunUsage {
    return this.meter.snapshot();
  }

  /** Waits for pending cache-file appends. */
  async flush(): Promise<void> {
    await this.cache.flush();
  }

  private async judgeStep(prompt: JudgePrompt, rubrics: readonly RubricDefinition[], schema: Record<string, unknown>, where: string): Promise<Record<string, RubricResult> | undefined> {
    const key = judgeCacheKey({
      provider: this.provider.name,
      model: this.provider.model,
      promptVersion: JUDGE_PROMPT_VERSION,
      temperature: this.temperature,
      rubrics,
      input: prompt.user,
    });
    const cached = await this.cache.get(key);
    if (cached) {
      this.meter.cacheHit();
      return cached;
    }
    // Two identical steps in flight at once (the same trajectory judged twice) share one request.
    const running = this.inflight.get(key);
    if (running) {
      const shared = await running;
      if (shared) this.meter.cacheHit();
      return shared;
    }
    const work = this.semaphore.use(() => {
      // Checked when the step's turn comes (not when it queued), so requests in flight count.
      if (this.spent()) {
        this.skippedSteps++;
        return Promise.resolve(undefined);
      }
      this.asked++;
      return this.ask(prompt, rubrics, schema, where, key);
    });
    this.inflight.set(key, work);
    try {
      return await work;
    } finally {
      this.inflight.delete(key);
    }
  }

  private async ask(prompt: JudgePrompt, rubrics: readonly RubricDefinition[], schema: Record<string, unknown>, where: string, key: string): Promise<Record<string, RubricResult> | undefined> {
    let reply = await this.send(prompt, schema, where);
    let verdict = parseVerdict(reply, rubrics);
    if (!verdict.ok) {
      this.meter.repair();
      reply = await this.send(prompt, schema, where, { previous: reply, error: verdict.error });
      verdict = parseVerdict(reply, rubrics);
    }
    if (!verdict.ok) {
      this.meter.failure();
      if (this.onInvalid === 'throw') throw new JudgeError(`${this.name}: ${where}: invalid verdict after one repair: ${verdict.error}`);
      return undefined;
    }
    await this.cache.set(key, verdict.value, { provider: this.provider.name, model: this.provider.model });
    return verdict.value;
  }

  private send(prompt: JudgePrompt, schema: Record<string, unknown>, where: string, repair?: { previous: ProviderReply; error: string }): Promise<ProviderReply> {
    return sendMetered({ provider: this.provider, meter: this.meter, retryPolicy: this.retryPolicy, retryHooks: this.retryHooks }, { prompt, schema, timeoutMs: this.timeoutMs, temperature: this.temperature, maxTokens: this.maxTokens, ...defined({ repair }) }, `${this.name}: ${where}`);
  }

}
