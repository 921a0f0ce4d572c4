/**
 * One WebSocket session with an OpenEnv server (`/ws`): a request at a time, each answered by one message. The
 * server keeps one environment per connection, so the session is the episode's state. A connection that closes
 * or a request left unanswered fails that request with an {@link OpenEnvConnectionError} (and every later one):
 * no request waits forever.
 */
import type WebSocket from 'ws';
import { OpenEnvConnectionError, OpenEnvProtocolError, OpenEnvServerError } from './errors.js';
import { parseJsonText, parseWire, WsEnvelopeSchema, WsErrorDataSchema } from './protocol.js';

/** The requests a client sends and the type of message that answers each. */
const ANSWER_TYPE = { reset: 'observation', step: 'observation', state: 'state' } as const;
/** A request of a session. */
export type SessionRequest = keyof typeof ANSWER_TYPE;

/** Largest message accepted (OpenEnv's client allows 100 MB: observations may hold screenshots). */
const MAX_MESSAGE_BYTES = 100 * 1024 * 1024;
/** How long `close` waits for the server's closing handshake before dropping the connection. */
const CLOSE_WAIT_MS = 1_000;

interface Pending {
  type: SessionRequest;
  resolve: (data: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * A connected session.
 *
 * @example
 * ```ts
 * const s = await OpenEnvSession.open('ws://127.0.0.1:8000/ws', { connectTimeoutMs: 10_000 });
 * const first = await s.request('reset', { seed: 1 }, 60_000); // the `data` of the `observation` answer
 * await s.close();
 * ```
 */
export class OpenEnvSession {
  private pending: Pending | undefined;
  /** Why the session can no longer be used; set once. */
  private failure: Error | undefined;
  private lastSocketError: string | undefined;

  private constructor(
    private readonly ws: WebSocket,
    /** The server's `/ws` address. */
    readonly url: string,
  ) {
    ws.on('message', (raw, isBinary) => this.onMessage(isBinary ? Buffer.from(raw as Buffer).toString('utf8') : String(raw)));
    ws.on('error', (err) => {
      this.lastSocketError = err.message;
    });
    ws.on('close', (code, reason) => {
      const why = reason.length > 0 ? `: ${reason.toString()}` : this.lastSocketError !== undefined ? `: ${this.lastSocketError}` : '';
      this.fail(new OpenEnvConnectionError('server_gone', `${url}: the OpenEnv server closed the connection (code ${code}${why})`));
    });
  }

  /** Connects; a server that cannot be reached within `connectTimeoutMs` is an {@link OpenEnvConnectionError}. */
  static async open(url: string, options: { connectTimeoutMs: number }): Promise<OpenEnvSession> {
    // Loaded at the first session: every command registers this environment, few of them play on it.
    const { WebSocket } = await import('ws');
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { handshakeTimeout: options.connectTimeoutMs, maxPayload: MAX_MESSAGE_BYTES });
      const onError = (err: Error): void => {
        ws.removeAllListeners();
        ws.on('error', () => undefined);
        ws.terminate();
        const timedOut = /timed out/i.test(err.message);
        reject(new OpenEnvConnectionError(timedOut ? 'timeout' : 'server_gone', `cannot open a session at ${url}: ${err.message}`, { cause: err }));
      };
      ws.once('error', onError);
      ws.once('open', () => {
        ws.off('error', onError);
        resolve(new OpenEnvSession(ws, url));
      });
    });
  }

  /** Whether requests can still be sent. */
  get usable(): boolean {
    return this.failure === undefined;
  }

  /**
   * Sends one request and resolves with the `data` of its answer. Rejects with an {@link OpenEnvServerError} when
   * the server answers with an `error` message, an {@link OpenEnvProtocolError} for a malformed answer or one of
   * another type, and an {@link OpenEnvConnectionError} when the connection closes first or no answer comes within
   * `timeoutMs` (the session is then dropped: a late answer would be taken for the next request's).
   */
  request(type: SessionRequest, data: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.pending !== undefined) return Promise.reject(new Error(`OpenEnvSession: '${type}' sent while '${this.pending.type}' awaits its answer`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new OpenEnvConnectionError('timeout', `${this.url}: no answer to '${type}' within ${timeoutMs} ms`));
        this.ws.terminate();
      }, timeoutMs);
      this.pending = { type, resolve, reject, timer };
      this.ws.send(JSON.stringify(data === undefined ? { type } : { type, data }), (err) => {
        if (err) this.fail(new OpenEnvConnectionError('server_gone', `${this.url}: could not send '${type}': ${err.message}`, { cause: err }));
      });
    });
  }

  /** Ends the session: a `close` message, then the closing handshake (dropped after a second). Idempotent. */
  async close(): Promise<void> {
    this.fail(new OpenEnvConnectionError('server_gone', `${this.url}: the session was closed`));
    if (this.ws.readyState === this.ws.CLOSED) return;
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify({ type: 'close' }));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, CLOSE_WAIT_MS);
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.ws.close(1000);
    });
  }

  private onMessage(text: string): void {
    const p = this.pending;
    if (p === undefined) {
      this.fail(new OpenEnvProtocolError(`${this.url}: the server sent a message no request asked for: ${text.slice(0, 120)}`));
      this.ws.terminate();
      return;
    }
    this.pending = undefined;
    clearTimeout(p.timer);
    const place = `${this.url} answer to '${p.type}'`;
    try {
      const envelope = parseWire(WsEnvelopeSchema, parseJsonText(text, place), place);
      if (envelope.type === 'error') {
        const e = parseWire(WsErrorDataSchema, envelope.data, `${place} (error) $.data`);
        const details = Array.isArray(e.errors) && e.errors.length > 0 ? `: ${JSON.stringify(e.errors).slice(0, 500)}` : '';
        p.reject(new OpenEnvServerError(e.code ?? 'UNKNOWN', `${place}: the server reports ${e.code ?? 'an error'}: ${e.message}${details}`));
        return;
      }
      const expected = ANSWER_TYPE[p.type];
      if (envelope.type !== expected) throw new OpenEnvProtocolError(`${place}: malformed answer: $.type is '${envelope.type}', expected '${expected}'`);
      p.resolve(envelope.data);
    } catch (err) {
      p.reject(err as Error);
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    const p = this.pending;
    if (p === undefined) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    p.reject(this.failure);
  }
}
