/**
 * What a gymflow client learns about an OpenEnv server before its first episode: health, action/observation/state
 * schemas, metadata, and (from a gymflow server) the environment's id, domain and tasks. Asked over HTTP, either
 * asynchronously or, for `make` (whose factories are synchronous), from a short-lived child process.
 */
import { spawnSync } from 'node:child_process';
import { ConfigError } from '../../core/errors.js';
import { OpenEnvConnectionError, OpenEnvServerError } from './errors.js';
import {
  GymflowDescriptionSchema,
  HealthSchema,
  MetadataSchema,
  parseJsonText,
  parseWire,
  SchemaResponseSchema,
  type GymflowDescription,
  type Metadata,
  type SchemaResponse,
} from './protocol.js';

/** A described OpenEnv server. */
export interface OpenEnvServerInfo {
  /** The HTTP address, without a trailing slash (`http://127.0.0.1:8000`). */
  baseUrl: string;
  /** The WebSocket session endpoint (`ws://127.0.0.1:8000/ws`). */
  wsUrl: string;
  metadata: Metadata;
  schema: SchemaResponse;
  /** Present when the server is a gymflow server (`gymflow serve-env`). */
  gymflow?: GymflowDescription;
}

/** Default limit of each request that describes a server. */
export const DESCRIBE_TIMEOUT_MS = 10_000;

/**
 * The HTTP and WebSocket addresses of a server given as `http(s)://…`, `ws(s)://…` or `host:port`; anything else is
 * a {@link ConfigError} naming `field`.
 */
export function openEnvUrls(url: string, field = 'url'): { baseUrl: string; wsUrl: string } {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw new ConfigError(`${field}: ${JSON.stringify(url)} is not a URL (expected http://HOST:PORT, ws://HOST:PORT or HOST:PORT)`);
  }
  const scheme = { 'http:': 'http:', 'https:': 'https:', 'ws:': 'http:', 'wss:': 'https:' }[parsed.protocol];
  if (scheme === undefined) throw new ConfigError(`${field}: ${JSON.stringify(url)} has scheme ${parsed.protocol} (expected http, https, ws or wss)`);
  if (parsed.search !== '' || parsed.hash !== '') throw new ConfigError(`${field}: ${JSON.stringify(url)}: an OpenEnv server's address takes no query or fragment`);
  const rest = `//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
  return { baseUrl: `${scheme}${rest}`, wsUrl: `${scheme === 'https:' ? 'wss:' : 'ws:'}${rest}/ws` };
}

/** The paths a description reads, in order. */
const PATHS = ['/health', '/schema', '/metadata', '/gymflow'] as const;
type Answer = { status: number; body: string } | { error: string };
type Answers = Partial<Record<(typeof PATHS)[number], Answer>>;

// The same requests as `fetchAnswers`, in a child process for the synchronous description: it prints the answers as
// JSON, and the parent reads them as the asynchronous path does.
const FETCH_SCRIPT = `
const [base, ms] = process.argv.slice(1);
const out = {};
for (const path of ${JSON.stringify(PATHS)}) {
  try {
    const r = await fetch(base + path, { signal: AbortSignal.timeout(Number(ms)) });
    out[path] = { status: r.status, body: await r.text() };
  } catch (e) {
    const c = e && e.cause;
    out[path] = { error: (e && e.name === 'TimeoutError') ? 'no answer within ' + ms + ' ms' : String(e && e.message) + (c ? ' (' + (c.code || c.message) + ')' : '') };
  }
  if (out[path].error !== undefined) break;
}
process.stdout.write(JSON.stringify(out));
`;

async function fetchAnswers(baseUrl: string, timeoutMs: number): Promise<Answers> {
  const out: Answers = {};
  for (const path of PATHS) {
    let answer: Answer;
    try {
      const r = await fetch(baseUrl + path, { signal: AbortSignal.timeout(timeoutMs) });
      answer = { status: r.status, body: await r.text() };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      answer = { error: e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `${e.message}${e.cause ? ` (${e.cause.code ?? e.cause.message})` : ''}` };
    }
    out[path] = answer;
    if ('error' in answer) break;
  }
  return out;
}

/**
 * Describes the OpenEnv server at `url`: `GET /health` (it must be healthy), `/schema`, `/metadata` and `/gymflow`
 * (a 404 there means it is not a gymflow server). A server that cannot be reached is an
 * {@link OpenEnvConnectionError}; an error status an {@link OpenEnvServerError}; a malformed answer an
 * `OpenEnvProtocolError` naming the path and field.
 */
export async function describeOpenEnv(url: string, options: { timeoutMs?: number } = {}): Promise<OpenEnvServerInfo> {
  const urls = openEnvUrls(url);
  return interpret(urls, await fetchAnswers(urls.baseUrl, options.timeoutMs ?? DESCRIBE_TIMEOUT_MS));
}

/**
 * {@link describeOpenEnv} without awaiting: the requests run in a child process while this one waits. For
 * `make`, whose factories are synchronous. It blocks this process's event loop, so a server running in this
 * very process cannot answer it: describe such a server with {@link describeOpenEnv} first (`registerOpenEnv`
 * does).
 */
export function describeOpenEnvSync(url: string, options: { timeoutMs?: number } = {}): OpenEnvServerInfo {
  const urls = openEnvUrls(url);
  const timeoutMs = options.timeoutMs ?? DESCRIBE_TIMEOUT_MS;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', FETCH_SCRIPT, urls.baseUrl, String(timeoutMs)], {
    encoding: 'utf8',
    timeout: PATHS.length * timeoutMs + 10_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.status !== 0) {
    const why = run.error?.message ?? (run.stderr.trim().split('\n').at(-1) || `exit ${String(run.status ?? run.signal)}`);
    throw new OpenEnvConnectionError('server_gone', `${urls.baseUrl}: could not ask the OpenEnv server for its description: ${why}`);
  }
  return interpret(urls, JSON.parse(run.stdout) as Answers);
}

function interpret(urls: { baseUrl: string; wsUrl: string }, answers: Answers): OpenEnvServerInfo {
  const body = (path: (typeof PATHS)[number], optional = false): unknown => {
    const place = `${urls.baseUrl}${path}`;
    const a = answers[path];
    if (a === undefined) throw new OpenEnvConnectionError('server_gone', `${place}: no answer`);
    if ('error' in a) throw new OpenEnvConnectionError(a.error.startsWith('no answer within') ? 'timeout' : 'server_gone', `cannot reach the OpenEnv server at ${urls.baseUrl}: GET ${path}: ${a.error}`);
    if (optional && a.status === 404) return undefined;
    if (a.status !== 200) throw new OpenEnvServerError(`HTTP_${a.status}`, `${place}: HTTP ${a.status}: ${a.body.slice(0, 200)}`);
    return parseJsonText(a.body, `GET ${place}`);
  };
  const health = parseWire(HealthSchema, body('/health'), `GET ${urls.baseUrl}/health`);
  if (health.status !== 'healthy') throw new OpenEnvServerError('UNHEALTHY', `${urls.baseUrl}/health: the OpenEnv server reports status '${health.status}'`);
  const schema = parseWire(SchemaResponseSchema, body('/schema'), `GET ${urls.baseUrl}/schema`);
  const metadata = parseWire(MetadataSchema, body('/metadata'), `GET ${urls.baseUrl}/metadata`);
  const gymflowBody = body('/gymflow', true);
  const info: OpenEnvServerInfo = { ...urls, metadata, schema };
  if (gymflowBody !== undefined) info.gymflow = parseWire(GymflowDescriptionSchema, gymflowBody, `GET ${urls.baseUrl}/gymflow`);
  return info;
}
