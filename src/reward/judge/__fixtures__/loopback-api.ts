import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defined } from '../../../core/defined.js';

/**
 * Test support: a loopback HTTP server (127.0.0.1, ephemeral port) that speaks just enough of the
 * Anthropic Messages API and the OpenAI chat-completions API for the real SDK clients to talk to it.
 * A handler decides each reply; the server records every request and the peak number in flight.
 */

/** A request the server received, body parsed as JSON. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * How to answer one request. `hang: true` never answers (until the server closes); `stallBody: true` sends
 * the status, the headers and the first half of the body, then nothing more.
 */
export interface FakeReply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
  hang?: boolean;
  stallBody?: boolean;
}

/** Decides the reply to the `index`-th request (0-based). */
export type FakeHandler = (request: RecordedRequest, index: number) => FakeReply | Promise<FakeReply>;

/** The loopback server. */
export class LoopbackApi {
  readonly requests: RecordedRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** Starts a server answering with `handler`. */
  static async start(handler: FakeHandler): Promise<LoopbackApi> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const self = api;
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text === '' ? undefined : JSON.parse(text);
        } catch {
          // keep the raw text
        }
        const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
        const index = self.requests.length;
        self.requests.push(recorded);
        self.inFlight++;
        self.maxInFlight = Math.max(self.maxInFlight, self.inFlight);
        let done = false;
        const finish = (): void => {
          if (!done) {
            done = true;
            self.inFlight--;
          }
        };
        res.on('close', finish);
        res.on('finish', finish);
        void Promise.resolve(handler(recorded, index)).then((reply) => {
          if (reply.hang) return;
          const send = (): void => {
            if (res.destroyed) return;
            res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
            const text = reply.body === undefined ? '' : JSON.stringify(reply.body);
            if (reply.stallBody) res.write(text.slice(0, Math.floor(text.length / 2)));
            else res.end(text);
          };
          if (reply.delayMs) setTimeout(send, reply.delayMs);
          else send();
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // Requests only arrive after listen(), so the handler above never sees `api` uninitialised.
    const api = new LoopbackApi(server, `http://127.0.0.1:${port}`);
    return api;
  }

  /** Requests to a path. */
  to(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Stops the server, dropping hanging connections. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A valid verdict giving every rubric the same score. */
export function verdict(rubrics: readonly string[], score: number): Record<string, { rationale: string; score: number }> {
  return Object.fromEntries(rubrics.map((r) => [r, { rationale: `${r} looks fine`, score }]));
}

/** An Anthropic `Message` whose content is one `tool_use` block with `input` (of the tool `name`, default the step judge's). */
export function anthropicToolUse(input: unknown, usage = { input_tokens: 100, output_tokens: 20 }, name = 'record_scores'): Record<string, unknown> {
  return {
    id: 'msg_test',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [{ type: 'tool_use', id: 'toolu_test', name, input }],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage,
  };
}

/** An Anthropic `Message` whose content is one text block. */
export function anthropicText(text: string, usage = { input_tokens: 100, output_tokens: 20 }): Record<string, unknown> {
  return { id: 'msg_test', type: 'message', role: 'assistant', model: 'claude-test', content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage };
}

/** An Anthropic error body. */
export function anthropicError(type: string, message: string): Record<string, unknown> {
  return { type: 'error', error: { type, message } };
}

/** An OpenAI `ChatCompletion` with `content` (or, with `toolArguments`, a tool call and null content). */
export function openaiCompletion(content: string | null, usage = { prompt_tokens: 100, completion_tokens: 20 }, toolArguments?: string): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 0,
    model: 'judge-test',
    choices: [
      {
        index: 0,
        finish_reason: toolArguments !== undefined ? 'tool_calls' : 'stop',
        logprobs: null,
        message: {
          role: 'assistant',
          content,
          refusal: null,
          ...defined({ tool_calls: toolArguments !== undefined ? [{ id: 'call_1', type: 'function', function: { name: 'record_scores', arguments: toolArguments } }] : undefined }),
        },
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** An OpenAI error body. */
export function openaiError(message: string, type = 'invalid_request_error'): Record<string, unknown> {
  return { error: { message, type, param: null, code: null } };
}
