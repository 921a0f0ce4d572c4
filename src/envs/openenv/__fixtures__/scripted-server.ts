/**
 * A real HTTP + WebSocket server for the OpenEnv client's tests whose answers each test writes: a well-behaved
 * OpenEnv server in its defaults, a misbehaving one (malformed answers, a closed connection, silence) where a test
 * says so.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** What a scripted server answers. */
export interface Script {
  /** Bodies of the GET endpoints, by path (a string is sent as it is; `404` answers Not Found). */
  http?: Record<string, unknown>;
  /** Answers one WebSocket message (already parsed); the default plays a one-step episode. */
  onMessage?: (message: { type: string; data?: Record<string, unknown> }, ws: WebSocket) => void;
}

/** A running scripted server. */
export interface ScriptedServer {
  url: string;
  /** Messages received over WebSocket, in order. */
  received: { type: string; data?: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** The default HTTP answers: a healthy server whose action is `{ "word": string }`. */
export const DEFAULT_HTTP: Record<string, unknown> = {
  '/health': { status: 'healthy' },
  '/schema': {
    action: { title: 'WordAction', type: 'object', properties: { word: { type: 'string' }, metadata: { type: 'object' } }, required: ['word'], additionalProperties: false },
    observation: { type: 'object' },
    state: { type: 'object' },
  },
  '/metadata': { name: 'WordEnvironment', description: 'Say a word.' },
  '/gymflow': 404,
};

/** Answers `reset` with a first observation and `step` with an ended episode of reward 1. */
export function defaultAnswer(message: { type: string }, ws: WebSocket): void {
  if (message.type === 'reset') ws.send(JSON.stringify({ type: 'observation', data: { observation: { prompt: 'Say a word.' }, reward: null, done: false } }));
  else if (message.type === 'step') ws.send(JSON.stringify({ type: 'observation', data: { observation: { prompt: 'Thanks.' }, reward: 1, done: true } }));
  else if (message.type === 'state') ws.send(JSON.stringify({ type: 'state', data: { step_count: 1 } }));
}

/** Starts a scripted server on a free port of 127.0.0.1. */
export async function startScriptedServer(script: Script = {}): Promise<ScriptedServer> {
  const http = { ...DEFAULT_HTTP, ...script.http };
  const received: ScriptedServer['received'] = [];
  const server = createServer((req, res) => {
    const body = http[new URL(req.url ?? '/', 'http://x').pathname];
    if (body === undefined || body === 404) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  const wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (ws) => {
    ws.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; data?: Record<string, unknown> };
      received.push(message);
      (script.onMessage ?? defaultAnswer)(message, ws);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
