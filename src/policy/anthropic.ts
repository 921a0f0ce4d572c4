import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { ContentBlockParam, Message, MessageCreateParamsNonStreaming, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { Agent, AgentContext, AgentDecision } from '../core/agent.js';
import type { StepMeta, TaskInfo } from '../core/types.js';
import type { AgentInfo } from '../core/wrappers/recorder.js';
import { classifySdkError, withDeadline } from '../core/retry.js';
import { DEFAULT_RETRY_POLICY, type FailureInfo, type RetryPolicy, withRetry } from '../core/retry.js';
import { renderContext, type StepNote } from './chat-format.js';
import { parseAnthropicContent, type AnthropicBlockLike } from './tool-call-parsing.js';
import { emptyUsage, type PolicyUsage } from './usage.js';
import { defined } from '../core/defined.js';

/**
 * An agent over the Anthropic Messages API through `@anthropic-ai/sdk`, with native tool use.
 *
 * Every step rebuilds the conversation from `ctx.history` (`chat-format.ts`: the exports' system
 * prompt as `system`, the instruction as the first user turn). An earlier step is an assistant turn
 * (the thought as a `text` block, then a `tool_use` block with id `call_<i>`) answered by a user turn
 * holding a `tool_result` block with the observation. The env's tools are passed as `tools`
 * (`input_schema` = the tool's parameter schema). The reply's single `tool_use` block is the action;
 * `text` (and `thinking`) blocks are the thought; a reply without `tool_use` is parsed as
 * `<tool_call>` text, and anything unreadable is the invalid-call action (replayed as the model's text
 * followed by a user turn with the parse error).
 *
 * Recorded: `meta.thought`; token usage and retries in {@link AnthropicPolicy.usage}. The API returns
 * neither log-probs nor token ids, so `meta.logprobs`/`meta.tokens` stay absent. SDK 1.x has no
 * `temperature`, so none is sent. Retries as in `openai.ts`.
 */

/** Options of {@link AnthropicPolicy}. */
export interface AnthropicPolicyOptions {
  model: string;
  /** Always passed explicitly (without one the SDK would fall back to other credentials). */
  apiKey: string;
  /** Default the SDK's (`https://api.anthropic.com`; the SDK appends `/v1/messages`). */
  baseURL?: string;
  /** The registered environment id (named in the system prompt). */
  envId: string;
  /** `max_tokens` of a reply (default 1024). */
  maxTokens?: number;
  /** Per-request timeout in ms (default 120 000). */
  timeoutMs?: number;
  /** Retry policy (default: the judge's). */
  retry?: RetryPolicy;
  /** Env var the key came from, named in 401/403 errors (default `ANTHROPIC_API_KEY`). */
  keyEnv?: string;
  /** Sleep between retries (tests). */
  sleep?: (ms: number) => Promise<void>;
}

/** The Anthropic policy (see the module comment). */
export class AnthropicPolicy implements Agent {
  readonly info: AgentInfo;
  /** Requests, retries and tokens so far. */
  readonly usage: PolicyUsage = emptyUsage();
  private readonly client: Anthropic;
  private readonly options: AnthropicPolicyOptions;
  private notes: StepNote[] = [];

  constructor(options: AnthropicPolicyOptions) {
    this.options = options;
    this.info = { name: `anthropic:${options.model}`, model: options.model };
    this.client = new Anthropic({ apiKey: options.apiKey, maxRetries: 0, ...defined({ baseURL: options.baseURL }) });
  }

  /** Forgets the previous episode's notes. */
  reset(_task: TaskInfo, _seed: number | undefined): void {
    this.notes = [];
  }

  /** The system prompt and messages for a context (exposed for tests and debugging). */
  request(ctx: AgentContext): { system: string; messages: MessageParam[] } {
    const r = renderContext(this.options.envId, ctx, this.notes);
    const messages: MessageParam[] = [{ role: 'user', content: r.user }];
    for (const s of r.steps) {
      if (s.invalid) {
        messages.push({ role: 'assistant', content: s.assistantText });
        messages.push({ role: 'user', content: s.result });
        continue;
      }
      const content: ContentBlockParam[] = [];
      if (s.thought !== '') content.push({ type: 'text', text: s.thought });
      content.push({ type: 'tool_use', id: s.callId, name: s.action.tool, input: s.action.params });
      messages.push({ role: 'assistant', content });
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: s.callId, content: s.result }] });
    }
    return { system: r.system, messages };
  }

  /** Asks the API for the next call and parses it. */
  async act(ctx: AgentContext): Promise<AgentDecision> {
    if (ctx.stepIndex === 0) this.notes = [];
    const o = this.options;
    const { system, messages } = this.request(ctx);
    const body: MessageCreateParamsNonStreaming = {
      model: o.model,
      max_tokens: o.maxTokens ?? 1024,
      system,
      messages,
      tools: ctx.tools.map((t): Tool => ({ name: t.name, description: t.description, input_schema: { type: 'object', ...t.parameters } })),
    };
    const message: Message = await withRetry(
      async () => {
        this.usage.requests++;
        const timeout = o.timeoutMs ?? 120_000;
        return withDeadline(timeout, (signal) => this.client.messages.create(body, { timeout, signal }));
      },
      (err) => this.classify(err),
      o.retry ?? DEFAULT_RETRY_POLICY,
      { onRetry: () => void this.usage.retries++, ...defined({ sleep: o.sleep }) },
    );
    this.usage.steps++;
    this.usage.promptTokens += message.usage?.input_tokens ?? 0;
    this.usage.completionTokens += message.usage?.output_tokens ?? 0;
    const blocks = message.content as unknown as AnthropicBlockLike[];
    const parsed = parseAnthropicContent(blocks);
    const note: StepNote = {};
    if (parsed.thought !== undefined) note.thought = parsed.thought;
    if (parsed.error !== undefined) {
      this.usage.invalidCalls++;
      const text = blocks
        .filter((b) => b.type === 'text')
        .map((b) => b.text ?? '')
        .join('\n')
        .trim();
      note.raw = text !== '' ? text : JSON.stringify(blocks);
    }
    this.notes[ctx.stepIndex] = note;
    const meta: StepMeta = {};
    if (parsed.thought !== undefined) meta.thought = parsed.thought;
    return Object.keys(meta).length > 0 ? { action: parsed.action, meta } : { action: parsed.action };
  }

  /** Classifies an SDK error for retries. */
  classify(err: unknown): FailureInfo {
    const who = `anthropic (${this.options.model}${this.options.baseURL !== undefined ? ` at ${this.options.baseURL}` : ''})`;
    return classifySdkError(err, { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError }, who, this.options.keyEnv ?? 'ANTHROPIC_API_KEY');
  }
}
