/**
 * Fuzz targets of `gymflow serve-env`'s request handling (src/envs/openenv/serve.ts, served-session.ts), against
 * a real server on a free port: any body to any route over HTTP, any message over the `/ws` session. Every
 * request gets an answer (JSON; never a 500), every WebSocket message exactly one reply of a known type, and
 * the server stays healthy.
 */
import fc from 'fast-check';
import WebSocket from 'ws';
import { registerBuiltinEnvs } from '../../src/envs/register.js';
import { serveEnv, type ServedEnv } from '../../src/envs/openenv/serve.js';
import { type FuzzTarget, jsonValue, timedAsync } from './harness.js';

const ENV_ID = 'gymflow/text-math-v0';
const KEYS = ['type', 'data', 'seed', 'task', 'episode_id', 'action', 'tool', 'params', 'answer', 'expression'];

/** The OpenEnv target: one server for the run, one WebSocket session for all WebSocket cases. */
export function openEnvTargets(): FuzzTarget[] {
  let served: ServedEnv | undefined;
  let ws: WebSocket | undefined;
  const replies: string[] = [];
  let waiter: (() => void) | undefined;
  const openWs = async (): Promise<WebSocket> => {
    const socket = new WebSocket(`${(served as ServedEnv).url.replace('http', 'ws')}/ws`);
    socket.on('message', (m) => {
      replies.push(String(m));
      waiter?.();
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return socket;
  };
  const setup = async (): Promise<void> => {
    if (served !== undefined) return;
    registerBuiltinEnvs();
    served = await serveEnv({ envId: ENV_ID, port: 0 });
  };
  const cleanup = async (): Promise<void> => {
    ws?.close();
    ws = undefined;
    await served?.close();
    served = undefined;
  };
  const body = fc.oneof(
    jsonValue(KEYS, 4).map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 64 }),
    fc.constantFrom('', '{', 'null', '{"seed": 1.5}', '{"task": ""}', '{"action": {"tool": "submit", "params": {}}}'),
  );
  return [
    {
      name: 'openenv/http',
      ciShare: 0.1,
      setup,
      cleanup,
      property: () =>
        fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'), fc.constantFrom('/reset', '/step', '/state', '/health', '/schema', '/metadata', '/gymflow', '/ws', '/x', '/reset?seed=1'), body, async (method, path, text) => {
          const url = `${(served as ServedEnv).url}${path}`;
          const res = await timedAsync(`${method} ${path}`, fetch(url, method === 'GET' ? { method } : { method, body: text, headers: { 'content-type': 'application/json' } }));
          const answer = await res.text();
          if (res.status >= 500) throw new Error(`${method} ${path} ${JSON.stringify(text)}: status ${res.status} ${answer}`);
          JSON.parse(answer);
          if (res.status >= 400 && res.status !== 404 && res.status !== 405 && !/detail/.test(answer)) throw new Error(`${method} ${path}: ${res.status} without detail: ${answer}`);
          const health = await fetch(`${(served as ServedEnv).url}/health`);
          if (health.status !== 200) throw new Error(`server unhealthy after ${method} ${path} ${JSON.stringify(text)}`);
        }),
    },
    {
      name: 'openenv/ws',
      ciShare: 0.25,
      setup,
      cleanup,
      property: () =>
        fc.asyncProperty(
          fc.oneof(
            body,
            fc.record({ type: fc.constantFrom('reset', 'step', 'state', 'nope'), data: jsonValue(KEYS, 3) }).map((m) => JSON.stringify(m)),
            fc.record({ type: fc.constant('step'), data: fc.record({ tool: fc.constantFrom('submit', 'calculator', ''), params: jsonValue(KEYS, 2) }) }).map((m) => JSON.stringify(m)),
          ),
          async (text) => {
            // `close` ends the session without a reply (OpenEnv's protocol).
            fc.pre(!/"type"\s*:\s*"close"/.test(text));
            if (ws === undefined || ws.readyState !== WebSocket.OPEN) ws = await openWs();
            replies.length = 0;
            const got = new Promise<void>((resolve) => {
              waiter = resolve;
            });
            ws.send(text);
            await timedAsync(`ws ${JSON.stringify(text)}`, got);
            waiter = undefined;
            const reply = JSON.parse(replies[0] as string) as { type?: unknown; data?: { message?: unknown; code?: unknown } };
            if (!['observation', 'error', 'state'].includes(reply.type as string)) throw new Error(`ws ${JSON.stringify(text)}: reply of type ${String(reply.type)}`);
            if (reply.type === 'error' && (typeof reply.data?.message !== 'string' || typeof reply.data.code !== 'string')) throw new Error(`ws ${JSON.stringify(text)}: an error without message and code`);
          },
        ),
    },
  ];
}
