import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { ContentBlockParam, Message, MessageCreateParamsNonStreaming, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { classifySdkError, type FailureInfo, withDeadline } from '../../../core/retry.js';
import { type JudgeProvider, type ProviderReply, type ProviderRequest, RUBRIC_OUTPUT } from './provider.js';
import { defined } from '../../../core/defined.js';

/**
 * The Anthropic Messages API (`POST /v1/messages`) through `@anthropic-ai/sdk`.
 *
 * Structured output: a tool (`record_scores`, or the request's `output.name`) whose `input_schema` is the verdict's
 * JSON Schema, forced with `tool_choice: { type: 'tool', name }`. The verdict is the `tool_use` block's
 * `input` — already JSON, so no text parsing. (Chosen over JSON-in-text because every tool-capable
 * Claude model supports forced tool use; a reply without the tool call falls back to parsing text.)
 * The repair turn answers the `tool_use` with an `is_error` `tool_result` carrying the validation error,
 * as the API requires every `tool_use` to be answered by a `tool_result`.
 *
 * Temperature: the Messages API in SDK 1.x has no `temperature` parameter, so none is sent.
 */

/** Options of {@link AnthropicProvider}. */
export interface AnthropicProviderOptions {
  apiKey: string;
  model: string;
  /** Default: `ANTHROPIC_BASE_URL` or `https://api.anthropic.com` (the SDK appends `/v1/messages`). */
  baseURL?: string;
  /** The env var the key came from, named in authentication errors (default `ANTHROPIC_API_KEY`). */
  keyEnv?: string;
}

/** The assistant turn, as message content to replay. */
type AnthropicTurn = ContentBlockParam[];

/** Anthropic as a {@link JudgeProvider}. */
export class AnthropicProvider implements JudgeProvider<AnthropicTurn> {
  readonly name = 'anthropic';
  readonly model: string;
  readonly supportsTemperature = false;
  private readonly client: Anthropic;
  private readonly keyEnv: string;

  constructor(options: AnthropicProviderOptions) {
    this.model = options.model;
    this.keyEnv = options.keyEnv ?? 'ANTHROPIC_API_KEY';
    // maxRetries 0: the judge retries (one policy for both providers, counted in usage).
    this.client = new Anthropic({ apiKey: options.apiKey, maxRetries: 0, ...defined({ baseURL: options.baseURL }) });
  }

  /** Sends one request (see {@link JudgeProvider.send}). */
  async send(request: ProviderRequest<AnthropicTurn>, onRequest: () => void): Promise<ProviderReply<AnthropicTurn>> {
    const output = request.output ?? RUBRIC_OUTPUT;
    const messages: MessageParam[] = [{ role: 'user', content: request.prompt.user }];
    if (request.repair) {
      const previous = request.repair.previous.turn;
      const toolUse = previous.find((b): b is Extract<ContentBlockParam, { type: 'tool_use' }> => b.type === 'tool_use');
      messages.push({ role: 'assistant', content: previous.length > 0 ? previous : [{ type: 'text', text: '(no output)' }] });
      const feedback = `Your verdict was invalid: ${request.repair.error}. Call ${output.name} again with a corrected verdict: ${output.fix}`;
      messages.push({
        role: 'user',
        content: toolUse
          ? [
              { type: 'tool_result', tool_use_id: toolUse.id, is_error: true, content: feedback },
              { type: 'text', text: 'Please correct the verdict.' },
            ]
          : feedback,
      });
    }
    const body: MessageCreateParamsNonStreaming = {
      model: this.model,
      max_tokens: request.maxTokens,
      // A prompt that is one user message (HLE's judge prompt) sends no system prompt.
      ...(request.prompt.system === '' ? {} : { system: request.prompt.system }),
      messages,
      tools: [
        {
          name: output.name,
          description: output.description,
          input_schema: { type: 'object', ...request.schema },
        },
      ],
      tool_choice: { type: 'tool', name: output.name },
    };
    onRequest();
    const message: Message = await withDeadline(request.timeoutMs, (signal) => this.client.messages.create(body, { timeout: request.timeoutMs, signal }));
    const turn: AnthropicTurn = [];
    let value: unknown;
    const texts: string[] = [];
    for (const block of message.content) {
      if (block.type === 'tool_use') {
        turn.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
        if (block.name === output.name && value === undefined) value = block.input;
      } else if (block.type === 'text') {
        turn.push({ type: 'text', text: block.text });
        texts.push(block.text);
      }
    }
    return {
      ...defined({ value }),
      text: value !== undefined ? JSON.stringify(value) : texts.join('\n'),
      inputTokens: message.usage?.input_tokens ?? 0,
      outputTokens: message.usage?.output_tokens ?? 0,
      ...(message.stop_reason ? { stopReason: message.stop_reason } : {}),
      turn,
    };
  }

  /** Classifies an SDK error (see {@link classifySdkError}). */
  classify(err: unknown): FailureInfo {
    return classifySdkError(err, { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError }, 'anthropic', this.keyEnv);
  }
}
