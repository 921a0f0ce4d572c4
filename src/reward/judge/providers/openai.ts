import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { classifySdkError, type FailureInfo, withDeadline } from '../../../core/retry.js';
import { type JudgeProvider, type ProviderReply, type ProviderRequest, RUBRIC_OUTPUT } from './provider.js';
import { defined } from '../../../core/defined.js';

/**
 * OpenAI or any OpenAI-compatible server (vLLM, llama.cpp, SGLang, …) through `openai`:
 * `POST {baseURL}/chat/completions`.
 *
 * Structured output: `response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } }`
 * (vLLM turns it into guided decoding). A server that answers that request with 400 or 422 — it does
 * not know `json_schema` — is asked again at once with `response_format: { type: 'json_object' }`, and
 * this provider stays on `json_object` from then on (the system prompt spells out the keys, and the
 * reply is validated either way). A reply whose content is empty but which carries a tool call is
 * read from the call's arguments.
 */

/** Options of {@link OpenAIProvider}. */
export interface OpenAIProviderOptions {
  apiKey: string;
  model: string;
  /** Default: `OPENAI_BASE_URL` or `https://api.openai.com/v1`; a vLLM server is `http://host:8000/v1`. */
  baseURL?: string;
  /** Start with `json_schema` (default) or go straight to `json_object`. */
  responseFormat?: 'json_schema' | 'json_object';
  /** The env var the key came from, named in authentication errors (default `OPENAI_API_KEY`). */
  keyEnv?: string;
}

/** The assistant turn: its text, replayed in a repair. */
type OpenAITurn = string;

/** An OpenAI-compatible chat-completions server as a {@link JudgeProvider}. */
export class OpenAIProvider implements JudgeProvider<OpenAITurn> {
  readonly name = 'openai';
  readonly model: string;
  readonly supportsTemperature = true;
  private readonly client: OpenAI;
  private mode: 'json_schema' | 'json_object';
  private readonly keyEnv: string;

  constructor(options: OpenAIProviderOptions) {
    this.model = options.model;
    this.mode = options.responseFormat ?? 'json_schema';
    this.keyEnv = options.keyEnv ?? 'OPENAI_API_KEY';
    // maxRetries 0: the judge retries (one policy for both providers, counted in usage).
    this.client = new OpenAI({ apiKey: options.apiKey, maxRetries: 0, ...defined({ baseURL: options.baseURL }) });
  }

  /** The response format in use (`json_object` after a fallback). */
  get responseFormat(): 'json_schema' | 'json_object' {
    return this.mode;
  }

  /** Sends one request (see {@link JudgeProvider.send}). */
  async send(request: ProviderRequest<OpenAITurn>, onRequest: () => void): Promise<ProviderReply<OpenAITurn>> {
    const output = request.output ?? RUBRIC_OUTPUT;
    const messages: ChatCompletionMessageParam[] = [
      // A prompt that is one user message (HLE's judge prompt) has no system message.
      ...(request.prompt.system === '' ? [] : [{ role: 'system' as const, content: request.prompt.system }]),
      { role: 'user', content: request.prompt.user },
    ];
    if (request.repair) {
      messages.push(
        { role: 'assistant', content: request.repair.previous.turn === '' ? '(no output)' : request.repair.previous.turn },
        {
          role: 'user',
          content: `Your verdict was invalid: ${request.repair.error}. Reply again with only the corrected JSON object: ${output.fix}`,
        },
      );
    }
    const body = (mode: 'json_schema' | 'json_object'): ChatCompletionCreateParamsNonStreaming => ({
      model: this.model,
      messages,
      max_completion_tokens: request.maxTokens,
      ...(request.temperature !== null ? { temperature: request.temperature } : {}),
      response_format:
        mode === 'json_schema'
          ? { type: 'json_schema', json_schema: { name: output.name, schema: request.schema, strict: true } }
          : { type: 'json_object' },
    });
    let completion: ChatCompletion;
    const mode = this.mode;
    try {
      onRequest();
      completion = await withDeadline(request.timeoutMs, (signal) => this.client.chat.completions.create(body(mode), { timeout: request.timeoutMs, signal }));
    } catch (err) {
      if (mode === 'json_schema' && err instanceof APIError && (err.status === 400 || err.status === 422)) {
        onRequest();
        completion = await withDeadline(request.timeoutMs, (signal) => this.client.chat.completions.create(body('json_object'), { timeout: request.timeoutMs, signal }));
        // Only a fallback that worked proves the server lacks json_schema (a 400 may have other causes).
        this.mode = 'json_object';
      } else throw err;
    }
    const choice = completion.choices[0];
    const message = choice?.message;
    let text = message?.content ?? '';
    if (text === '' && message?.tool_calls) {
      for (const call of message.tool_calls) {
        if (call.type === 'function') {
          text = call.function.arguments;
          break;
        }
      }
    }
    if (text === '' && message?.refusal) text = `(refused: ${message.refusal})`;
    return {
      text,
      inputTokens: completion.usage?.prompt_tokens ?? 0,
      outputTokens: completion.usage?.completion_tokens ?? 0,
      ...(choice?.finish_reason ? { stopReason: choice.finish_reason } : {}),
      turn: text,
    };
  }

  /** Classifies an SDK error (see {@link classifySdkError}). */
  classify(err: unknown): FailureInfo {
    return classifySdkError(err, { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError }, 'openai', this.keyEnv);
  }
}
