import { JUDGE_OUTPUT_NAME } from '../output.js';
import type { JudgePrompt } from '../prompt.js';
import type { FailureInfo } from '../../../core/retry.js';

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

/**
 * What the model fills in: the name of the Anthropic tool / OpenAI schema, the tool's description, and what a repair
 * asks for after "Your verdict was invalid: …". Default {@link RUBRIC_OUTPUT}, the step judge's rubric verdict.
 */
export interface JudgeOutputSpec {
  name: string;
  description: string;
  /** The repair's request, e.g. `every rubric, each with a rationale and a score between 0 and 1.` */
  fix: string;
}

/** The step judge's output: one entry per rubric. */
export const RUBRIC_OUTPUT: JudgeOutputSpec = {
  name: JUDGE_OUTPUT_NAME,
  description: 'Record the verdict on the current step: one entry per rubric, each with a rationale and a score between 0 and 1.',
  fix: 'every rubric, each with a rationale and a score between 0 and 1.',
};

/** One request: the prompt, the verdict's JSON Schema, and for a repair the invalid reply and what was wrong. */
export interface ProviderRequest<Turn = unknown> {
  prompt: JudgePrompt;
  schema: Record<string, unknown>;
  /** What the verdict is (default {@link RUBRIC_OUTPUT}). */
  output?: JudgeOutputSpec;
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

