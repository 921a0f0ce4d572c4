/**
 * `gymflow mcp --http`: the MCP server over Streamable HTTP on `node:http`, one session (and one `McpServer`) per
 * client, at `/mcp`. Bound to 127.0.0.1 by default; the Host header must then name a loopback host (a web page that
 * rebinds its DNS name to 127.0.0.1 cannot reach it), and a browser Origin must be a loopback one. A bearer token,
 * when set, is required on every request; binding another address requires one (the Host header is then checked
 * only against the names `--allowed-host` gives).
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError } from '../../core/errors.js';

/** The path the server answers on. */
export const MCP_PATH = '/mcp';

/** Largest request body read (a tool call's arguments; paths, not file contents, travel). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Options of {@link serveHttp}. */
export interface HttpServeOptions {
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** Port (0: any free one). */
  port: number;
  /** The bearer token every request must carry; required unless `host` is a loopback address. */
  token?: string;
  /** Host names (without port) accepted in the Host header besides the loopback ones and `host`. */
  allowedHosts?: readonly string[];
  /** Makes the server of a new session. */
  makeServer: () => McpServer;
}

/** A running HTTP server. */
export interface HttpServing {
  /** `http://host:port/mcp`. */
  url: string;
  port: number;
  /** Closes every session and the listener. */
  close(): Promise<void>;
}

/** Whether `host` is a loopback address or name. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/** The host name of a Host header or an origin's authority, without the port. */
function hostName(authority: string): string {
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(authority);
  if (m) return m[1] as string;
  const colon = authority.lastIndexOf(':');
  return colon > 0 && authority.indexOf(':') === colon ? authority.slice(0, colon) : authority;
}

/** Answers with a JSON-RPC error and `status`. */
function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** Reads a request body as JSON (undefined when empty). */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ConfigError(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? undefined : (JSON.parse(text) as unknown);
}

/** Whether the Authorization header carries `token` (compared in constant time). */
function authorized(req: IncomingMessage, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  if (!m) return false;
  const given = Buffer.from((m[1] as string).trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Serves MCP over Streamable HTTP until closed.
 *
 * @throws ConfigError when `host` is not a loopback address and no token is given.
 */
export async function serveHttp(options: HttpServeOptions): Promise<HttpServing> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token === '' ? undefined : options.token;
  if (!isLoopback(host) && token === undefined) {
    throw new ConfigError(`--host ${host}: serving beyond this machine needs a bearer token: pass --token TOKEN or set GYMFLOW_MCP_TOKEN`);
  }
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  let port = options.port;
  // On loopback the Host header is the defence (no token needed there); on another address the token is, and the
  // Host header is checked only against the names given.
  const checkHost = isLoopback(host) || (options.allowedHosts ?? []).length > 0;
  const allowed = (): Set<string> => new Set(['localhost', '127.0.0.1', '::1', hostName(host), ...(options.allowedHosts ?? [])]);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // A request target is a path; URL parses one only against some origin, and which one does not matter here.
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== MCP_PATH) return refuse(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
    // DNS rebinding: a page served from evil.example that resolves to 127.0.0.1 sends Host: evil.example.
    const hostHeader = req.headers.host ?? '';
    if (checkHost && !allowed().has(hostName(hostHeader))) return refuse(res, 403, `forbidden: Host '${hostHeader}' is not this server's (allowed: ${[...allowed()].join(', ')}; --allowed-host adds one)`);
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== 'null') {
      let originHost: string;
      try {
        originHost = new URL(origin).hostname.replace(/^\[|\]$/g, '');
      } catch {
        return refuse(res, 403, `forbidden: Origin '${origin}' is not a URL`);
      }
      if (!allowed().has(originHost)) return refuse(res, 403, `forbidden: Origin '${origin}' may not call this server`);
    }
    if (token !== undefined && !authorized(req, token)) return refuse(res, 401, 'unauthorized: send Authorization: Bearer <token> (gymflow mcp --token)', { 'www-authenticate': 'Bearer' });

    const sessionId = req.headers['mcp-session-id'];
    const id = Array.isArray(sessionId) ? sessionId[0] : sessionId;
    let body: unknown;
    if (req.method === 'POST') {
      try {
        body = await readJson(req);
      } catch (err) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: `parse error: ${(err as Error).message}` }, id: null }));
        return;
      }
    }
    if (id !== undefined) {
      const session = sessions.get(id);
      if (!session) return refuse(res, 404, `no session '${id}' (it ended, or the server restarted): initialize a new one`);
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) return refuse(res, 400, 'bad request: no Mcp-Session-Id header, and not an initialize request');
    const server = options.makeServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, { transport, server }),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      void server.close().catch(() => undefined);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) refuse(res, 500, `internal error: ${(err as Error).message}`);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE' ? new ConfigError(`--port ${options.port}: port in use on ${host}`) : err));
    http.listen(options.port, host, () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}${MCP_PATH}`,
    port,
    async close() {
      await Promise.allSettled([...sessions.values()].map(async (s) => s.transport.close()));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
