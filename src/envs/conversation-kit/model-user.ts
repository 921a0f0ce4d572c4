import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { classifySdkError, DEFAULT_RETRY_POLICY, type FailureInfo, type RetryPolicy, withDeadline, withRetry } from '../../core/retry.js';
import { Transcript } from './transcript.js';
import { STOP_TOKEN, type SimulatedUser, type UserEpisode, type UserTurn, UserSimulatorError } from './user.js';
import { defined } from '../../core/defined.js';

/**
 * A simulated user played by a language model, as tau-bench's user simulator: the model is told the
 * task's hidden instruction and the rules below, sees the agent's messages as the *user* side of its chat
 * and writes the customer's lines as the *assistant*; a line containing `###STOP###` ends the
 * conversation. The conversation opens with the agent's greeting (the episode's, else {@link AGENT_GREETING})
 * and the task's opening message (the same first line the agent's instruction quotes, whoever plays the user).
 *
 * Servers: any OpenAI-compatible chat-completions server (`openai:MODEL[@BASE_URL]`, vLLM included) or the
 * Anthropic Messages API (`anthropic:MODEL[@BASE_URL]`). The SDK loads on the first reply, so registering
 * an environment costs nothing. Requests are retried as the policies' are (`core/retry.ts`: timeouts,
 * connection errors, 408/409/429/5xx, with backoff), each under a deadline on the whole request; the last
 * failure, or an empty reply, is a {@link UserSimulatorError}, which the environment turns into a truncated
 * episode with the reason in `info` — never a crash.
 */

/** The agent's greeting the model user answers with the task's opening (tau-bench's first agent turn). */
export const AGENT_GREETING = 'Hi! How can I help you today?';

/** tau-bench's user-simulator system prompt, around the hidden instruction. */
export function modelUserPrompt(instruction: string): string {
  return [
    'You are a user interacting with an agent.',
    '',
    `Instruction: ${instruction}`,
    '',
    'Rules:',
    "- Just generate one line at a time to simulate the user's message.",
    '- Do not give away all the instruction at once. Only provide the information that is necessary for the current step.',
    '- Do not hallucinate information that is not provided in the instruction. For example, if the agent asks for the order id but it is not mentioned in the instruction, do not make up an order id, just say you do not remember or have it.',
    `- If the instruction goal is satisfied, generate '${STOP_TOKEN}' as a standalone message without anything else to end the conversation.`,
    '- Do not repeat the exact instruction in the conversation. Instead, use your own words to convey the same information.',
    '- Try to make the conversation as natural as possible, and stick to the personalities in the instruction.',
  ].join('\n');
}

/** Options of {@link ModelUser}. */
export interface ModelUserOptions {
  provider: 'openai' | 'anthropic';
  model: string;
  apiKey: string;
  /** The server: `http://host:8000/v1` (OpenAI-compatible) or `http://host` (Anthropic); default the SDK's. */
  baseURL?: string;
  /** Sampling temperature (default 0, tau-bench's). Not sent to Anthropic (its SDK 1.x has none). */
  temperature?: number;
  /** Most tokens of one reply (default 512). */
  maxTokens?: number;
  /** Deadline of one request in ms, body included (default 60 000). */
  timeoutMs?: number;
  /** Retries (default 4, from 0.5 s). */
  retry?: RetryPolicy;
  /** The env var the key came from, named in 401/403 errors. */
  keyEnv?: string;
  /** Sleep between retries (tests). */
  sleep?: (ms: number) => Promise<void>;
}

/** The model user (see the module comment). */
export class ModelUser implements SimulatedUser<unknown> {
  readonly kind: string;
  private readonly options: ModelUserOptions;
  private openai: OpenAI | undefined;
  private anthropic: Anthropic | undefined;
  private classify: ((err: unknown) => FailureInfo) | undefined;
  private episode: UserEpisode<unknown> | undefined;
  private transcript = new Transcript();

  constructor(options: ModelUserOptions) {
    this.options = options;
    this.kind = `${options.provider}:${options.model}`;
  }

  /** Starts an episode: the conversation so far is the greeting and the opening. */
  start(episode: UserEpisode<unknown>): void {
    this.episode = episode;
    this.transcript = new Transcript();
    this.transcript.add({ role: 'agent', text: episode.greeting ?? AGENT_GREETING });
    this.transcript.add({ role: 'user', text: episode.opening });
  }

  /** Asks the model for the user's next line. */
  async reply(message: string): Promise<UserTurn> {
    const episode = this.episode;
    if (!episode) throw new UserSimulatorError(`user ${this.kind}: reply() before start()`);
    const o = this.options;
    let text: string;
    try {
      const send = await this.sender(episode, message);
      text = await withRetry(
        () => send(),
        (err) => (this.classify as (err: unknown) => FailureInfo)(err),
        o.retry ?? DEFAULT_RETRY_POLICY,
        o.sleep ? { sleep: o.sleep } : {},
      );
    } catch (err) {
      throw new UserSimulatorError(`user ${this.kind}${o.baseURL !== undefined ? ` at ${o.baseURL}` : ''}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const stop = text.includes(STOP_TOKEN);
    const said = text.replaceAll(STOP_TOKEN, '').trim();
    if (!stop && said === '') throw new UserSimulatorError(`user ${this.kind}: the model's reply is empty`);
    // Only an answered message joins the conversation, so turns keep alternating after a failure.
    this.transcript.add({ role: 'agent', text: message });
    this.transcript.add({ role: 'user', text: said });
    return stop ? { text: said, done: true, end: 'stop' } : { text: said, done: false };
  }

  /** The conversation so far in the provider's roles: the agent speaks as `user`, the simulated user as `assistant`. */
  messages(): { role: 'user' | 'assistant'; content: string }[] {
    return this.transcript.turns.map((t) => ({ role: t.role === 'agent' ? 'user' : 'assistant', content: t.text }));
  }

  /** A function that sends the next request and returns the reply's text (the SDK loaded on first use). */
  private async sender(episode: UserEpisode<unknown>, message: string): Promise<() => Promise<string>> {
    const o = this.options;
    const timeout = o.timeoutMs ?? 60_000;
    const system = modelUserPrompt(episode.instruction);
    const messages = [...this.messages(), { role: 'user' as const, content: message }];
    if (o.provider === 'openai') {
      const sdk = await import('openai');
      this.openai ??= new sdk.default({ apiKey: o.apiKey, maxRetries: 0, ...defined({ baseURL: o.baseURL }) });
      this.classify ??= (err) => classifySdkError(err, sdk, `openai (${o.model})`, o.keyEnv ?? 'OPENAI_API_KEY');
      const client = this.openai;
      const body = {
        model: o.model,
        messages: [{ role: 'system' as const, content: system }, ...messages],
        temperature: o.temperature ?? 0,
        max_completion_tokens: o.maxTokens ?? 512,
        seed: episode.seed,
      };
      return async () => {
        const completion = await withDeadline(timeout, (signal) => client.chat.completions.create(body, { timeout, signal }));
        return completion.choices[0]?.message?.content ?? '';
      };
    }
    const sdk = await import('@anthropic-ai/sdk');
    this.anthropic ??= new sdk.default({ apiKey: o.apiKey, maxRetries: 0, ...defined({ baseURL: o.baseURL }) });
    this.classify ??= (err) => classifySdkError(err, sdk, `anthropic (${o.model})`, o.keyEnv ?? 'ANTHROPIC_API_KEY');
    const client = this.anthropic;
    const body = { model: o.model, max_tokens: o.maxTokens ?? 512, system, messages };
    return async () => {
      const message = await withDeadline(timeout, (signal) => client.messages.create(body, { timeout, signal }));
      return message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    };
  }
}
