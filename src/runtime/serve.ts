import type { PipelineConfig } from '../loop/config.js';
import { superviseLaunch, type TrainerLaunch } from './trainer-process.js';

/**
 * Serving a checkpoint for the stages that act with the policy (`policy.serve`, docs/pipeline.md "Serving
 * the policy"): the server's command line ({@link serveLaunch}) and the wait until it answers for the
 * checkpoint ({@link waitForModel}). The activities are in activities/serve.ts.
 */

/** The resolved `policy.serve` section. */
export type ServeConfig = NonNullable<PipelineConfig['policy']['serve']>;

/** What a server command is started with. */
export interface ServeTarget {
  /** The checkpoint directory on this host. */
  model: string;
  /** The model name to serve it as. */
  name: string;
  /** The trainer's Python (for the default command). */
  python: string;
  /** Where the default command's configuration file goes (written by the caller). */
  configFile: string;
}

/** The default server's configuration file (`python -m gymflow_trainer serve --config FILE`, docs/trainer.md). */
export function serveConfigFile(serve: ServeConfig, target: Pick<ServeTarget, 'model' | 'name'>, parentPid: number): Record<string, unknown> {
  return { checkpoint: target.model, host: serve.bind ?? serve.host, port: serve.port, served_model_name: target.name, parent_pid: parentPid };
}

/**
 * The server's command line: `serve.command` with `{model}`, `{host}` (the bind address), `{port}` and
 * `{name}` filled in, under the lifeline's supervisor (so it stops when the worker is gone), or the trainer's
 * own server reading `target.configFile` (which watches the lifeline itself).
 *
 * @example
 * serveLaunch({ host: '127.0.0.1', port: 8000, command: ['vllm', 'serve', '{model}', '--port', '{port}'], startup_timeout: '10m', token_ids: true }, target)
 * // { command: '/venv/bin/python', args: ['-m', 'gymflow_trainer.lifeline', '--', 'vllm', 'serve', '/work/checkouts/sha256-…', '--port', '8000'] }
 */
export function serveLaunch(serve: ServeConfig, target: ServeTarget): TrainerLaunch {
  if (serve.command === undefined) return { command: target.python, args: ['-m', 'gymflow_trainer', 'serve', '--config', target.configFile] };
  const values: Record<string, string> = { '{model}': target.model, '{host}': serve.bind ?? serve.host, '{port}': String(serve.port), '{name}': target.name };
  const [command, ...args] = serve.command.map((arg) => arg.replace(/\{(model|host|port|name)\}/g, (p) => values[p] as string));
  return superviseLaunch(target.python, { command: command as string, args });
}

/** Options of {@link waitForModel}. */
export interface WaitForModelOptions {
  timeoutMs: number;
  /** Between polls (default 1 s). */
  intervalMs?: number;
  /** Aborting it stops the wait (the activity's cancellation). */
  signal?: AbortSignal;
  /** Called after every poll that did not find the model, with what was wrong. */
  onPoll?: (problem: string) => void;
}

/**
 * Polls `GET {baseURL}/models` until the server lists `model`; resolves with the milliseconds it took.
 * Rejects after `timeoutMs` with the last problem seen (connection refused, an HTTP status, the names the
 * server lists instead), or when `signal` aborts.
 */
export async function waitForModel(baseURL: string, model: string, options: WaitForModelOptions): Promise<number> {
  const started = Date.now();
  const interval = options.intervalMs ?? 1000;
  let problem = 'no answer yet';
  for (;;) {
    if (options.signal?.aborted) throw new Error(`stopped waiting for ${baseURL} to serve ${model}`);
    try {
      const res = await fetch(`${baseURL}/models`, { signal: AbortSignal.timeout(Math.min(10_000, Math.max(1000, options.timeoutMs))) });
      if (!res.ok) problem = `GET ${baseURL}/models answered HTTP ${res.status}`;
      else {
        const body = (await res.json()) as { data?: { id?: unknown }[] };
        const ids = Array.isArray(body.data) ? body.data.map((m) => String(m.id)) : [];
        if (ids.includes(model)) return Date.now() - started;
        problem = `the server lists ${ids.length === 0 ? 'no model' : ids.map((id) => `'${id}'`).join(', ')}, not '${model}'`;
      }
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      problem = `GET ${baseURL}/models failed: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
    }
    if (Date.now() - started + interval > options.timeoutMs) {
      throw new Error(`the policy server did not serve '${model}' at ${baseURL} within ${Math.round(options.timeoutMs / 1000)} s (policy.serve.startup_timeout); last: ${problem}`);
    }
    options.onPoll?.(problem);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, interval);
      options.signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
  }
}
