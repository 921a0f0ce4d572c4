/**
 * The soak's faulty model APIs, on loopback: the LLM judge (an OpenAI-compatible server answering verdicts,
 * failing a share of requests with 429, 500 or a timeout) and a proxy in front of the policy server (failing a
 * share of requests with 500). The workers reach them over HTTP like the real services, so the faults take the
 * real clients' retry paths.
 */
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { Rng } from '../../src/core/rng.js';
import { LoopbackApi, openaiCompletion, openaiError, type RecordedRequest } from '../../src/reward/judge/__fixtures__/loopback-api.js';

/** Requests seen and faults injected, by kind. */
export interface FaultTally {
  requests: number;
  /** Faults injected, by kind. */
  faults: Record<string, number>;
  /** Requests the proxy could not forward because the server was not up (yet): not injected, not counted above. */
  upstreamDown?: number;
}

/** The rubrics a judge request asks for (the JSON schema of its response format). */
function askedRubrics(r: RecordedRequest): string[] {
  const b = r.body as { response_format?: { json_schema?: { schema?: { required?: string[] } } } } | undefined;
  return b?.response_format?.json_schema?.schema?.required ?? [];
}

/** A verdict that depends only on the request's prompt, so a retried or repeated request gets the same scores. */
function verdictFor(r: RecordedRequest): Record<string, { rationale: string; score: number }> {
  const b = r.body as { messages?: unknown } | undefined;
  const digest = createHash('sha256').update(JSON.stringify(b?.messages ?? null)).digest();
  return Object.fromEntries(askedRubrics(r).map((name, i) => [name, { rationale: `${name}: judged by the soak's loopback judge`, score: ((digest[i % digest.length] ?? 0) % 3) / 2 }]));
}

/** The faulty judge: an OpenAI-compatible chat-completions server on 127.0.0.1. */
export interface FaultyJudge {
  /** Base URL for `reward.judge.base_url` (ends in `/v1`). */
  baseUrl: string;
  tally: FaultTally;
  close(): Promise<void>;
}

/**
 * Starts the judge. A share `rate` of requests fails, evenly among a 429 (with `retry-after: 1`), a 500 and a
 * timeout (no answer for `hangMs`, longer than the judge's `timeout`); the rest get a verdict.
 */
export async function startFaultyJudge(options: { rate: number; seed: number; hangMs: number }): Promise<FaultyJudge> {
  const rng = new Rng(options.seed);
  const tally: FaultTally = { requests: 0, faults: { '429': 0, '500': 0, timeout: 0 } };
  const bump = (k: string): void => void (tally.faults[k] = (tally.faults[k] ?? 0) + 1);
  const api = await LoopbackApi.start((req) => {
    tally.requests++;
    // The recorded requests are not needed; keep the server's memory flat over hours.
    api.requests.length = 0;
    if (rng.next() < options.rate) {
      const kind = rng.int(0, 2);
      if (kind === 0) {
        bump('429');
        return { status: 429, headers: { 'retry-after': '1' }, body: openaiError('rate limited (soak fault)', 'rate_limit_error') };
      }
      if (kind === 1) {
        bump('500');
        return { status: 500, body: openaiError('internal error (soak fault)', 'server_error') };
      }
      bump('timeout');
      return { delayMs: options.hangMs, body: openaiCompletion(JSON.stringify(verdictFor(req))) };
    }
    return { body: openaiCompletion(JSON.stringify(verdictFor(req))) };
  });
  return { baseUrl: `${api.url}/v1`, tally, close: () => api.close() };
}

/** A proxy that forwards HTTP to a target and fails a share of requests with 500. */
export interface FaultyProxy {
  tally: FaultTally;
  close(): Promise<void>;
}

/**
 * Listens on `listen` and forwards every request to `target` (same path, method, headers and body); a share
 * `rate` of them gets a 500 (an OpenAI error body) without reaching the target. A target that is down gives a 502.
 */
export async function startFaultyProxy(options: { listen: { host: string; port: number }; target: { host: string; port: number }; rate: number; seed: number }): Promise<FaultyProxy> {
  const rng = new Rng(options.seed);
  const tally: FaultTally = { requests: 0, faults: { '500': 0 }, upstreamDown: 0 };
  const server: Server = createServer((req, res) => {
    tally.requests++;
    if (rng.next() < options.rate) {
      tally.faults['500'] = (tally.faults['500'] ?? 0) + 1;
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(openaiError('policy server error (soak fault)', 'server_error')));
      return;
    }
    const upstream = httpRequest({ host: options.target.host, port: options.target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (err) => {
      tally.upstreamDown = (tally.upstreamDown ?? 0) + 1;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify(openaiError(`policy server unreachable: ${err.message}`, 'server_error')));
      else res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listen.port, options.listen.host, resolve);
  });
  return {
    tally,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
