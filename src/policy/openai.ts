import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Agent, AgentContext, AgentDecision } from '../core/agent.js';
import { toolFunction } from '../core/chat/prompt.js';
import type { StepMeta, TaskInfo } from '../core/types.js';
import type { AgentInfo } from '../core/wrappers/recorder.js';
import { classifySdkError, withDeadline } from '../core/retry.js';
import { DEFAULT_RETRY_POLICY, type FailureInfo, RetriesExhaustedError, type RetryPolicy, withRetry } from '../core/retry.js';
import { renderContext, type StepNote } from './chat-format.js';
import { invalidCall, parseOpenAIMessage } from './tool-call-parsing.js';
import { emptyUsage, taskStepSeed, type PolicyUsage } from './usage.js';
import { defined } from '../core/defined.js';

/**
 * An agent over any OpenAI-compatible chat-completions server (vLLM in production, also OpenAI,
 * SGLang, llama.cpp) through the `openai` SDK.
 *
 * Every step sends the whole conversation rebuilt from `ctx.history` (see `chat-format.ts`: the same
 * system prompt and `<tool_call>` format as the exported training data). Two modes:
 *
 * - `text` (default): no `tools` parameter; the model writes `<tool_call>{…}</tool_call>` and the reply
 *   text is parsed. Earlier assistant turns are sent as their text form, observations as `tool`
 *   messages with `tool_call_id: call_<i>`. With the trainer's ChatML template on the server
 *   (`vllm serve … --chat-template`), the prompt is byte-identical to the training text.
 * - `native`: the tools go as `tools` (function shape) and the reply's `tool_calls` are read (its text,
 *   if it has no call, is still parsed as `<tool_call>`); earlier turns go as structured `tool_calls`
 *   with canonical-JSON arguments. vLLM needs `--enable-auto-tool-choice --tool-call-parser …`.
 *
 * Recorded per step (`meta`): `thought`; `logprobs` (requested with `logprobs: true`, kept when the
 * server returns them and all are finite); `tokens.completion` / `tokens.prompt` when the server returns
 * token ids — vLLM's `token_ids` / `prompt_token_ids` (ask with `returnTokenIds`), or log-prob tokens of
 * the form `token_id:<n>` (vLLM's `return_tokens_as_token_ids`); neither is standard OpenAI, so with
 * other servers `tokens` stays absent. Token usage and retries are summed in {@link OpenAIPolicy.usage}.
 *
 * Failures: timeouts, connection errors, 408/409/429/5xx are retried with exponential backoff (the
 * judge's policy, `retry`); other errors, and the last failure, throw `RetriesExhaustedError` — a dead
 * server ends the rollout, while a malformed model output is an invalid-call action (never thrown), and so
 * is a prompt the server refuses as longer than the model's context ({@link isContextOverflow}), as with
 * the `local:` policy.
 */

/** Options of {@link OpenAIPolicy}. */
export interface OpenAIPolicyOptions {
  /** The model name the server serves. */
  model: string;
  /** API key; for a local vLLM without `--api-key` any string works (`EMPTY`). */
  apiKey: string;
  /** Base URL including `/v1` (`http://localhost:8000/v1`); default the SDK's (`OPENAI_BASE_URL` or api.openai.com). */
  baseURL?: string;
  /** The registered environment id (named in the system prompt). */
  envId: string;
  /** `text` (default) or `native` tool calls. */
  mode?: 'text' | 'native';
  temperature?: number;
  topP?: number;
  /** Base sampling seed; each request sends a seed derived from it, the episode seed, the step and the task. */
  seed?: number;
  /** `max_tokens` of a completion (default 1024). */
  maxTokens?: number;
  /** Request log-probs (default true). */
  logprobs?: boolean;
  /** Ask vLLM for token ids (`return_token_ids: true`, non-standard; default false). */
  returnTokenIds?: boolean;
  /** Extra body fields for the server (vLLM sampling extras such as `top_k`, `repetition_penalty`). */
  extraBody?: Record<string, unknown>;
  /** Per-request timeout in ms (default 120 000). */
  timeoutMs?: number;
  /** Retry policy (default: the judge's, 4 retries from 0.5 s). */
  retry?: RetryPolicy;
  /** Env var the key came from, named in 401/403 errors (default `OPENAI_API_KEY`). */
  keyEnv?: string;
  /** Sleep between retries (tests). */
  sleep?: (ms: number) => Promise<void>;
}

/** Fields vLLM may add to a choice / completion (not in the OpenAI types). */
interface VllmExtras {
  token_ids?: unknown;
  prompt_token_ids?: unknown;
}

/**
 * Whether a request failed because the prompt does not fit the model's context: a 400 whose message says so
 * (vLLM: "This model's maximum context length is …", OpenAI: `context_length_exceeded`, the trainer's server:
 * "the prompt is N tokens, the model's context is M").
 */
export function isContextOverflow(err: unknown): boolean {
  return err instanceof RetriesExhaustedError && err.failure.status === 400 && /maximum context length|context_length_exceeded|the model's context is|prompt is too long/i.test(err.message);
}

function numberArray(v: unknown): number[] | undefined {
  return Array.isArray(v) && v.every((x): x is number => typeof x === 'number' && Number.isInteger(x)) ? v : undefined;
}

/** The OpenAI-compatible policy (see the module comment). */
export class OpenAIPolicy implements Agent {
  readonly info: AgentInfo;
  /** Requests, retries and tokens so far. */
  readonly usage: PolicyUsage = emptyUsage();
  private readonly client: OpenAI;
  private readonly options: OpenAIPolicyOptions;
  private readonly mode: 'text' | 'native';
  private notes: StepNote[] = [];
  private episodeSeed: number | undefined;
  /** The episode's task: its id goes into each request's seed ({@link taskStepSeed}). */
  private taskId = '';

  constructor(options: OpenAIPolicyOptions) {
    this.options = options;
    this.mode = options.mode ?? 'text';
    this.info = { name: `openai:${options.model}`, model: options.model };
    // maxRetries 0: retries happen in withRetry (bounded, counted in usage).
    this.client = new OpenAI({ apiKey: options.apiKey, maxRetries: 0, ...defined({ baseURL: options.baseURL }) });
  }

  /** Forgets the previous episode's notes. */
  reset(task: TaskInfo, seed: number | undefined): void {
    this.notes = [];
    this.episodeSeed = seed;
    this.taskId = task.id;
  }

  /** The chat messages for a context (exposed for tests and debugging). */
  messages(ctx: AgentContext): ChatCompletionMessageParam[] {
    const r = renderContext(this.options.envId, ctx, this.notes);
    const out: ChatCompletionMessageParam[] = [
      { role: 'system', content: r.system },
      { role: 'user', content: r.user },
    ];
    for (const s of r.steps) {
      if (this.mode === 'text') {
        out.push({ role: 'assistant', content: s.assistantText });
        out.push({ role: 'tool', tool_call_id: s.callId, content: s.result });
      } else if (s.invalid) {
        // No call to answer: the model's output, then the feedback as a user turn.
        out.push({ role: 'assistant', content: s.assistantText });
        out.push({ role: 'user', content: s.result });
      } else {
        out.push({
          role: 'assistant',
          content: s.thought === '' ? null : s.thought,
          tool_calls: [{ id: s.callId, type: 'function', function: { name: s.action.tool, arguments: s.argumentsJson } }],
        });
        out.push({ role: 'tool', tool_call_id: s.callId, content: s.result });
      }
    }
    return out;
  }

  /** Asks the server for the next call and parses it. */
  async act(ctx: AgentContext): Promise<AgentDecision> {
    if (ctx.stepIndex === 0) this.notes = [];
    const o = this.options;
    const body: ChatCompletionCreateParamsNonStreaming & Record<string, unknown> = {
      ...o.extraBody,
      model: o.model,
      messages: this.messages(ctx),
      max_tokens: o.maxTokens ?? 1024,
      ...defined({
        temperature: o.temperature,
        top_p: o.topP,
        seed: o.seed !== undefined ? taskStepSeed(o.seed, this.episodeSeed, ctx.stepIndex, this.taskId) : undefined,
      }),
      ...((o.logprobs ?? true) ? { logprobs: true } : {}),
      ...(o.returnTokenIds ? { return_token_ids: true } : {}),
      ...(this.mode === 'native' ? { tools: ctx.tools.map((t): ChatCompletionTool => toolFunction(t)) } : {}),
    };
    let completion: ChatCompletion;
    try {
      completion = await withRetry(
        async () => {
          this.usage.requests++;
          const timeout = o.timeoutMs ?? 120_000;
          return withDeadline(timeout, (signal) => this.client.chat.completions.create(body, { timeout, signal }));
        },
        (err) => this.classify(err),
        o.retry ?? DEFAULT_RETRY_POLICY,
        { onRetry: () => void this.usage.retries++, ...defined({ sleep: o.sleep }) },
      );
    } catch (err) {
      if (!isContextOverflow(err)) throw err;
      // The conversation no longer fits the model's context: no output is possible. An invalid call, as the
      // `local:` policy reports it (the episode goes on to its step limit or ends), never thrown: one long
      // episode must not fail a collection or an evaluation.
      this.usage.steps++;
      this.usage.invalidCalls++;
      this.notes[ctx.stepIndex] = { raw: '' };
      return { action: invalidCall(`context overflow: ${(err as Error).message}`, '') };
    }
    this.usage.promptTokens += completion.usage?.prompt_tokens ?? 0;
    this.usage.completionTokens += completion.usage?.completion_tokens ?? 0;
    return this.decide(completion, ctx.stepIndex);
  }

  private decide(completion: ChatCompletion, stepIndex: number): AgentDecision {
    this.usage.steps++;
    const choice = completion.choices[0];
    const message = choice?.message;
    const calls = (message?.tool_calls ?? []).map((c) => (c.type === 'function' ? { type: c.type, function: { name: c.function.name, arguments: c.function.arguments } } : { type: c.type }));
    const parsed = parseOpenAIMessage({ content: message?.content ?? (message?.refusal ? `(refused: ${message.refusal})` : null), tool_calls: calls });
    const note: StepNote = {};
    if (parsed.thought !== undefined) note.thought = parsed.thought;
    if (parsed.error !== undefined) {
      this.usage.invalidCalls++;
      note.raw = calls.length > 0 ? (typeof parsed.action.params.raw === 'string' ? parsed.action.params.raw : '') : (message?.content ?? '');
    }
    this.notes[stepIndex] = note;
    const meta: StepMeta = {};
    if (parsed.thought !== undefined) meta.thought = parsed.thought;
    const content = choice?.logprobs?.content;
    if (content && content.length > 0) {
      const lps = content.map((c) => c.logprob);
      if (lps.every((x) => Number.isFinite(x))) meta.logprobs = lps;
    }
    const extras = choice as unknown as VllmExtras | undefined;
    const fromTokens = content?.map((c) => /^token_id:(\d+)$/.exec(c.token)?.[1]);
    const completionIds = numberArray(extras?.token_ids) ?? (fromTokens && fromTokens.length > 0 && fromTokens.every((x) => x !== undefined) ? fromTokens.map(Number) : undefined);
    const promptIds = numberArray((completion as unknown as VllmExtras).prompt_token_ids) ?? numberArray(extras?.prompt_token_ids);
    if (completionIds || promptIds) meta.tokens = defined({ prompt: promptIds, completion: completionIds });
    return Object.keys(meta).length > 0 ? { action: parsed.action, meta } : { action: parsed.action };
  }

  /** Classifies an SDK error for retries. */
  classify(err: unknown): FailureInfo {
    // Named with its model and server: a collection may run several policies, and errors reach a log far from the spec.
    const who = `openai (${this.options.model}${this.options.baseURL !== undefined ? ` at ${this.options.baseURL}` : ''})`;
    return classifySdkError(err, { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError }, who, this.options.keyEnv ?? 'OPENAI_API_KEY');
  }
}
