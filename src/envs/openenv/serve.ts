/**
 * `gymflow serve-env`: a gymflow environment served over OpenEnv's protocol, so trainers that speak it (TRL,
 * SkyRL, ART, openenv-core's `GenericEnvClient`) can use it. One environment per WebSocket connection (`/ws`);
 * the HTTP endpoints follow OpenEnv's stock server (`/reset` stateless, as there), plus `/gymflow`.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import { make, spec } from '../../core/registry.js';
import type { AgentEnv, JsonSchema } from '../../core/types.js';
import { actionSchemaFor, ToolCallSchema } from './action-schema.js';
import { stepResultOf } from './observation.js';
import { GymflowResetSchema, WS_ERROR_CODES, type GymflowDescription } from './protocol.js';
import { ServedSession, validationErrors } from './served-session.js';

/** Options of {@link serveEnv}. */
export interface ServeEnvOptions {
  /** A registered environment id (`gymflow envs`). */
  envId: string;
  /** Address to listen on. Default `127.0.0.1` (this machine only). */
  host?: string;
  /** Port; 0 picks a free one. Default 8000. */
  port?: number;
  /** Keyword arguments of `make`. */
  kwargs?: Record<string, unknown>;
  /** Most WebSocket sessions at once; one more is refused with `CAPACITY_REACHED`. Default 64. */
  maxSessions?: number;
  /** Told when a session opens or closes. */
  onSession?: (event: 'open' | 'close', active: number) => void;
}

/** A running server. */
export interface ServedEnv {
  /** `http://HOST:PORT`. */
  url: string;
  host: string;
  port: number;
  /** WebSocket sessions open now. */
  readonly activeSessions: number;
  /** Stops listening, ends every session and closes their environments. */
  close(): Promise<void>;
}

/** The observation schema of a served gymflow environment (OpenEnv's `done`, `reward`, `metadata` included). */
export const OBSERVATION_SCHEMA: JsonSchema = {
  title: 'GymflowObservation',
  type: 'object',
  properties: {
    text: { type: 'string', description: 'What the agent observes.' },
    terminated: { type: 'boolean', description: 'The task ended (submitted, finished, goal reached).' },
    truncated: { type: 'boolean', description: 'A limit ended the episode (steps, time).' },
    info: { type: 'object', description: 'gymflow details: task (on reset), reason, success, score (at the end), error (an invalid action).' },
    done: { type: 'boolean', default: false },
    reward: { type: ['number', 'null'], default: null },
    metadata: { type: 'object' },
  },
  required: ['text', 'terminated', 'truncated', 'info'],
};

/** The state schema of a served gymflow environment. */
export const STATE_SCHEMA: JsonSchema = {
  title: 'GymflowState',
  type: 'object',
  properties: {
    episode_id: { type: ['string', 'null'] },
    step_count: { type: 'integer', minimum: 0 },
    env_id: { type: 'string' },
    task_id: { type: ['string', 'null'] },
    done: { type: 'boolean' },
  },
  required: ['step_count'],
};

const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Serves `envId` over OpenEnv's protocol until `close()`.
 *
 * | endpoint | answer |
 * | --- | --- |
 * | `GET /health` | `{"status": "healthy"}` |
 * | `GET /metadata` | `{name: envId, description, version}` |
 * | `GET /schema` | action ({@link actionSchemaFor}), observation, state schemas |
 * | `POST /reset` | a fresh environment's first step result (stateless, as OpenEnv's) |
 * | `POST /step` | 422 for a malformed action, else 409: a gymflow episode has state; step over `/ws` |
 * | `GET /state` | a fresh environment's state |
 * | `GET /gymflow` | env id, domain, step limit, train and held-out tasks |
 * | `WS /ws` | a session: `reset` (`seed`, `task`, `episode_id`), `step` (`{tool, params}`), `state`, `close` |
 *
 * @example
 * ```ts
 * const served = await serveEnv({ envId: 'gymflow/household-v0', port: 0 });
 * // python: GenericEnvClient(base_url=served.url) …
 * await served.close();
 * ```
 */
export async function serveEnv(options: ServeEnvOptions): Promise<ServedEnv> {
  const { envId } = options;
  const kwargs = options.kwargs ?? {};
  const maxSessions = options.maxSessions ?? 64;
  const envSpec = spec(envId);
  const makeEnv = (): AgentEnv => make(envId, { kwargs });
  // One environment, made now, gives the tools (a bad kwarg fails here, before the server listens) and the tasks.
  const probe = makeEnv();
  const tools = probe.tools;
  let description: GymflowDescription;
  try {
    description = {
      env_id: envId,
      domain: probe.domain,
      max_episode_steps: envSpec.maxEpisodeSteps ?? null,
      tasks: { train: probe.listTasks?.('train') ?? [], heldout: probe.listTasks?.('heldout') ?? [] },
    };
  } finally {
    await probe.close();
  }
  const schema = { action: actionSchemaFor(tools), observation: OBSERVATION_SCHEMA, state: STATE_SCHEMA };
  const metadata = { name: envId, description: envSpec.description, version: packageVersion(), readme_content: null, author: null, documentation_url: null };

  const sessions = new Set<ServedSession>();
  // Loaded here, not with the module: `gymflow/envs` re-exports this file, and every command loads that.
  const [{ createServer }, { WebSocketServer }] = await Promise.all([import('node:http'), import('ws')]);
  const wss = new WebSocketServer({ noServer: true, maxPayload: 100 * 1024 * 1024 });
  const server = createServer((req, res) => {
    void route(req, res).catch((err: unknown) => json(res, 500, { detail: err instanceof Error ? err.message : String(err) }));
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const get = (answer: () => unknown): void => (req.method === 'GET' ? json(res, 200, answer()) : json(res, 405, { detail: 'Method Not Allowed' }));
    switch (path) {
      case '/health':
        return get(() => ({ status: 'healthy' }));
      case '/metadata':
        return get(() => metadata);
      case '/schema':
        return get(() => schema);
      case '/gymflow':
        return get(() => description);
      case '/state':
        return get(() => ({ episode_id: null, step_count: 0, env_id: envId, task_id: null, done: false }));
      case '/reset': {
        if (req.method !== 'POST') return json(res, 405, { detail: 'Method Not Allowed' });
        const body = await readJson(req, res);
        if (body === undefined) return;
        const parsed = GymflowResetSchema.safeParse(body ?? {});
        if (!parsed.success) return json(res, 422, { detail: validationErrors(parsed.error, ['body']) });
        const env = makeEnv();
        try {
          const { seed, task } = parsed.data;
          const ts = await env.reset({ ...(seed == null ? {} : { seed }), ...(task == null ? {} : { task }) });
          return json(res, 200, stepResultOf(ts));
        } catch (err) {
          return json(res, 422, { detail: (err as Error).message });
        } finally {
          await env.close();
        }
      }
      case '/step': {
        if (req.method !== 'POST') return json(res, 405, { detail: 'Method Not Allowed' });
        const body = await readJson(req, res);
        if (body === undefined) return;
        const action = body !== null && typeof body === 'object' ? (body as { action?: unknown }).action : undefined;
        const call = ToolCallSchema.safeParse(action);
        if (!call.success) return json(res, 422, { detail: validationErrors(call.error, ['body', 'action']) });
        return json(res, 409, {
          detail: `${envId} keeps an episode's state: a step needs the episode's reset before it, which stateless HTTP (a fresh environment per request) cannot give. Step over the WebSocket session at /ws.`,
        });
      }
      default:
        return json(res, 404, { detail: 'Not Found' });
    }
  }

  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (sessions.size >= maxSessions) {
        ws.send(JSON.stringify({ type: 'error', data: { message: `server at capacity: ${sessions.size} of ${maxSessions} sessions active`, code: WS_ERROR_CODES.capacity, active_sessions: sessions.size, max_sessions: maxSessions } }));
        ws.close(1013);
        return;
      }
      let env: AgentEnv;
      try {
        env = makeEnv();
      } catch (err) {
        ws.send(JSON.stringify({ type: 'error', data: { message: (err as Error).message, code: WS_ERROR_CODES.factory } }));
        ws.close(1011);
        return;
      }
      const session: ServedSession = new ServedSession(ws, env, envId, () => {
        sessions.delete(session);
        options.onSession?.('close', sessions.size);
      });
      sessions.add(session);
      options.onSession?.('open', sessions.size);
    });
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new ConfigError(`cannot serve ${envId} on ${host}:${options.port ?? 8000}: the port is in use`) : err),
    );
    server.listen(options.port ?? 8000, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    host,
    port,
    get activeSessions() {
      return sessions.size;
    },
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/** The request's JSON body (`null` when empty); undefined after answering 422 for a body that is not JSON. */
async function readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      json(res, 413, { detail: `body over ${MAX_BODY_BYTES} bytes` });
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    json(res, 422, { detail: `body is not JSON: ${(err as Error).message}` });
    return undefined;
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

let version: string | undefined;
function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
