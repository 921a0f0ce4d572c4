import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import { DEFAULT_RETRY_POLICY, type RetryHooks, type RetryPolicy } from '../../core/retry.js';
import { jsonPath } from '../../core/trajectory.js';
import { parseAnswerJudgeConfig } from './answer-judge-config.js';
import { createJudgeProvider } from './config.js';
import { JudgeError } from './errors.js';
import { sendMetered } from './send.js';
import { extractJson } from './output.js';
import type { JudgePrompt } from './prompt.js';
import type { JudgeOutputSpec, JudgeProvider, ProviderReply } from './providers/provider.js';
import { Semaphore } from './semaphore.js';
import { UsageMeter, type JudgePrices, type JudgeRunUsage } from './usage.js';
import { defined } from '../../core/defined.js';

export * from './answer-judge-config.js';

/**
 * The answer judge of Humanity's Last Exam (`hle_eval/run_judge_results.py`): given a question, the reference
 * answer and a model's free-text response, a judge model extracts the response's final answer and decides whether
 * it matches the reference, with the structured output HLE specifies — `extracted_final_answer`, `reasoning`,
 * `correct` (`yes` / `no`) and `confidence` (the confidence the response stated, 0–100; 100 when it stated none).
 * The prompt is HLE's, word for word, as one user message; the judge model is any of the step judge's providers
 * (Anthropic through a forced tool, OpenAI-compatible servers through `json_schema`), with the same retries and the
 * same single repair of an invalid reply.
 *
 * HLE's schema also has `strict: Literal[True]`, a field the model must fill with `true`; it carries nothing and is
 * left out here.
 */

/** HLE's judge prompt (`JUDGE_PROMPT`), with `{question}`, `{response}` and `{correct_answer}` to fill in. */
export const HLE_JUDGE_PROMPT = `Judge whether the following [response] to [question] is correct or not based on the precise and unambiguous [correct_answer] below.

[question]: {question}

[response]: {response}

Your judgement must be in the format and criteria specified below:

extracted_final_answer: The final exact answer extracted from the [response]. Put the extracted answer as 'None' if there is no exact, final answer to extract from the response.

[correct_answer]: {correct_answer}

reasoning: Explain why the extracted_final_answer is correct or incorrect based on [correct_answer], focusing only on if there are meaningful differences between [correct_answer] and the extracted_final_answer. Do not comment on any background to the problem, do not attempt to solve the problem, do not argue for any answer different than [correct_answer], focus only on whether the answers match.

correct: Answer 'yes' if extracted_final_answer matches the [correct_answer] given above, or is within a small margin of error for numerical problems. Answer 'no' otherwise, i.e. if there if there is any inconsistency, ambiguity, non-equivalency, or if the extracted answer is incorrect.


confidence: The extracted confidence score between 0|\\%| and 100|\\%| from [response]. Put 100 if there is no confidence score available.`;

/** The judge's prompt for one response: HLE's prompt filled in, as the only (user) message. */
export function hleJudgePrompt(question: string, response: string, correctAnswer: string): JudgePrompt {
  // One pass over the template, so a question that contains "{response}" is not filled in twice.
  const values: Record<string, string> = { question, response, correct_answer: correctAnswer };
  return { system: '', user: HLE_JUDGE_PROMPT.replace(/\{(question|response|correct_answer)\}/g, (_, key: string) => values[key] as string) };
}

/** The name of the Anthropic tool / OpenAI schema the answer judge fills in. */
export const ANSWER_VERDICT_OUTPUT: JudgeOutputSpec = {
  name: 'extracted_answer',
  description: "Record the judgement of the response: the final answer extracted from it, the reasoning, whether it matches the correct answer ('yes' or 'no'), and the confidence the response stated (0-100).",
  fix: "extracted_final_answer (a string), reasoning (a string), correct ('yes' or 'no') and confidence (an integer from 0 to 100).",
};

/** JSON Schema of the verdict (HLE's `ExtractedAnswer`), in the subset OpenAI's strict mode and vLLM accept. */
export const ANSWER_VERDICT_JSON_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    extracted_final_answer: { type: 'string', description: "The final exact answer extracted from the response; 'None' if there is none." },
    reasoning: { type: 'string', description: 'Why the extracted answer matches the correct answer or not.' },
    correct: { type: 'string', enum: ['yes', 'no'] },
    confidence: { type: 'integer', description: 'The confidence the response stated, 0 to 100; 100 when it stated none.' },
  },
  required: ['extracted_final_answer', 'reasoning', 'correct', 'confidence'],
  additionalProperties: false,
};

const VerdictSchema = z.object({
  extracted_final_answer: z.string(),
  reasoning: z.string(),
  correct: z.enum(['yes', 'no']),
  confidence: z.number().min(0).max(100),
});

/** The judge's verdict on one response. */
export interface AnswerVerdict {
  /** The final answer the judge read off the response (`None` when it found none). */
  extractedFinalAnswer: string;
  reasoning: string;
  /** `correct: yes`. */
  correct: boolean;
  /** The confidence the response stated, 0–100 (100 when it stated none, as HLE's prompt says). */
  confidence: number;
}

/** Validates a reply: a structured value (tool input) or text to parse. */
export function parseAnswerVerdict(reply: { value?: unknown; text: string }): { ok: true; value: AnswerVerdict } | { ok: false; error: string } {
  let value = reply.value;
  if (value === undefined) {
    const extracted = extractJson(reply.text);
    if (!extracted.ok) return extracted;
    value = extracted.value;
  }
  const r = VerdictSchema.safeParse(value);
  if (!r.success) return { ok: false, error: r.error.issues.map((i) => `${jsonPath(i.path)}: ${i.message}`).join('; ') };
  return { ok: true, value: { extractedFinalAnswer: r.data.extracted_final_answer, reasoning: r.data.reasoning, correct: r.data.correct === 'yes', confidence: r.data.confidence } };
}

/** Options of {@link AnswerJudge}. */
export interface AnswerJudgeOptions {
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Per-request timeout in ms (default 60 000). */
  timeoutMs?: number;
  retry?: RetryPolicy;
  prices?: JudgePrices;
  /** Sampling temperature (default 0; `null` sends none). Ignored by APIs without one. */
  temperature?: number | null;
  /** Output tokens per request (default 4096). */
  maxTokens?: number;
  /** Overrides of the retry loop's sleep and randomness (tests). */
  retryHooks?: Pick<RetryHooks, 'sleep' | 'random'>;
}

/**
 * Grades free-text answers as HLE does (see the module comment). A reply still invalid after one repair, or an
 * API that fails through its retries, is a {@link JudgeError}.
 *
 * @example
 * ```ts
 * const judge = createAnswerJudge({ provider: 'openai', model: 'o3-mini', apiKeyEnv: 'OPENAI_API_KEY' });
 * const v = await judge.grade({ question: 'What is 2+2?', response: 'Explanation: …\nExact Answer: 4\nConfidence: 90%', correctAnswer: '4' });
 * // { extractedFinalAnswer: '4', correct: true, confidence: 90, reasoning: '…' }
 * ```
 */
export class AnswerJudge {
  readonly name: string;
  private readonly semaphore: Semaphore;
  private readonly meter: UsageMeter;
  private readonly timeoutMs: number;
  private readonly retryPolicy: RetryPolicy;
  private readonly temperature: number | null;
  private readonly maxTokens: number;
  private readonly retryHooks: Pick<RetryHooks, 'sleep' | 'random'>;

  constructor(
    private readonly provider: JudgeProvider,
    options: AnswerJudgeOptions = {},
  ) {
    this.name = `answer-judge:${provider.name}:${provider.model}`;
    this.semaphore = new Semaphore(options.concurrency ?? 4);
    this.meter = new UsageMeter(options.prices);
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retryPolicy = options.retry ?? DEFAULT_RETRY_POLICY;
    this.temperature = provider.supportsTemperature ? (options.temperature === undefined ? 0 : options.temperature) : null;
    this.maxTokens = options.maxTokens ?? 4096;
    this.retryHooks = options.retryHooks ?? {};
  }

  /** The verdict on `response` to `question`, whose reference answer is `correctAnswer`. */
  async grade(input: { question: string; response: string; correctAnswer: string }): Promise<AnswerVerdict> {
    const prompt = hleJudgePrompt(input.question, input.response, input.correctAnswer);
    return this.semaphore.use(async () => {
      let reply = await this.send(prompt);
      let verdict = parseAnswerVerdict(reply);
      if (!verdict.ok) {
        this.meter.repair();
        reply = await this.send(prompt, { previous: reply, error: verdict.error });
        verdict = parseAnswerVerdict(reply);
      }
      if (!verdict.ok) {
        this.meter.failure();
        throw new JudgeError(`${this.name}: invalid verdict after one repair: ${verdict.error}`);
      }
      return verdict.value;
    });
  }

  /** Requests, tokens, cost, failures, retries and repairs so far. */
  usage(): JudgeRunUsage {
    return this.meter.snapshot();
  }

  private send(prompt: JudgePrompt, repair?: { previous: ProviderReply; error: string }): Promise<ProviderReply> {
    return sendMetered(
      { provider: this.provider, meter: this.meter, retryPolicy: this.retryPolicy, retryHooks: this.retryHooks },
      { prompt, schema: ANSWER_VERDICT_JSON_SCHEMA, output: ANSWER_VERDICT_OUTPUT, timeoutMs: this.timeoutMs, temperature: this.temperature, maxTokens: this.maxTokens, ...defined({ repair }) },
      this.name,
    );
  }

}

/**
 * An answer judge from its configuration (validated here; `place` names it in errors). Throws {@link ConfigError}
 * naming the env var when no API key is found.
 */
export function createAnswerJudge(
  config: unknown,
  deps: { env?: Record<string, string | undefined>; retryHooks?: Pick<RetryHooks, 'sleep' | 'random'>; place?: string; at?: readonly PropertyKey[] } = {},
): AnswerJudge {
  const c = parseAnswerJudgeConfig(config, deps.place, deps.at);
  let provider: JudgeProvider;
  try {
    provider = createJudgeProvider(c, deps.env ?? process.env);
  } catch (err) {
    if (err instanceof ConfigError && deps.place !== undefined) throw new ConfigError(`${deps.place} ${jsonPath(deps.at ?? [])}: ${err.message}`);
    throw err;
  }
  return new AnswerJudge(provider, {
    concurrency: c.concurrency,
    timeoutMs: c.timeoutMs,
    retry: c.retry,
    temperature: c.temperature,
    maxTokens: c.maxTokens,
    ...defined({ prices: c.prices, retryHooks: deps.retryHooks }),
  });
}
