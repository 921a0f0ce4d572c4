import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../loop/config.js';
import { agentSpecFor, needsOnnxPolicy, servedPolicy } from '../loop/plan.js';
import { serveConfigFile, serveLaunch, waitForModel } from './serve.js';

const REF = `sha256:${'ab12'.repeat(16)}`;
const minimal = { name: 'exp', env: 'gymflow/tool-use-v0', train: { command: 'sft' }, max_iterations: 1 };
const withServe = (serve: Record<string, unknown>) => parsePipelineConfig({ ...minimal, policy: { init: { tiny: {} }, serve } }, 'inline');

describe('policy.serve configuration and planning', () => {
  it('fills defaults, and rejects a command without {model}, a bad port and a startup timeout over 1 h', () => {
    expect(withServe({}).policy.serve).toEqual({ host: '127.0.0.1', port: 8000, startup_timeout: '10m', token_ids: true });
    expect(() => withServe({ command: ['vllm', 'serve'] })).toThrow(/inline \$\.policy\.serve\.command: the command must name the checkpoint directory with \{model\}/);
    expect(() => withServe({ port: 70000 })).toThrow(/inline \$\.policy\.serve\.port: /);
    expect(() => withServe({ startup_timeout: '2h' })).toThrow(/inline \$\.policy\.serve\.startup_timeout: at most 1h/);
    expect(() => withServe({ hots: 'gpu-1' })).toThrow(/inline \$\.policy\.serve: .*hots/);
  });

  it('serves the checkpoint instead of exporting it, under a name of the iteration and checkpoint', () => {
    const served = withServe({ host: 'gpu-1', port: 8100, token_ids: false });
    expect(needsOnnxPolicy(served)).toBe(false);
    expect(needsOnnxPolicy(parsePipelineConfig({ ...minimal, policy: { init: { tiny: {} } } }, 'inline'))).toBe(true);
    const endpoint = servedPolicy(served, { checkpointRef: REF, iteration: 3 });
    expect(endpoint).toEqual({ model: 'exp-iter-3-ab12ab12ab12', baseURL: 'http://gpu-1:8100/v1', tokenIds: false, startupTimeout: '10m' });
    expect(servedPolicy(served, { checkpointPath: '/models/base', iteration: 0 })?.model).toBe('exp-iter-0-init');
    expect(servedPolicy(withServe({ host: '::1' }), { checkpointRef: REF, iteration: 1 })?.baseURL).toBe('http://[::1]:8000/v1');
    // A stand-in agent acts until the first training; without policy.serve nothing is served.
    expect(servedPolicy(served, { checkpointRef: REF, agent: 'expert', iteration: 0 })).toBeUndefined();
    expect(servedPolicy(parsePipelineConfig({ ...minimal, policy: { init: { tiny: {} } } }, 'inline'), { checkpointRef: REF, iteration: 1 })).toBeUndefined();

    expect(agentSpecFor('policy', { checkpointRef: REF, iteration: 3 }, undefined, endpoint)).toBe('openai:exp-iter-3-ab12ab12ab12@http://gpu-1:8100/v1');
    expect(agentSpecFor('expert', { checkpointRef: REF, iteration: 3 }, undefined, endpoint)).toBe('expert');
    expect(agentSpecFor('policy', { checkpointRef: REF, agent: 'random', iteration: 0 }, undefined, endpoint)).toBe('random');
  });

  it('builds the command line: the trainer’s server by default, placeholders filled in a custom one, which runs supervised', () => {
    const target = { model: '/work/checkouts/m', name: 'exp-iter-1-x', python: '/venv/bin/python', configFile: '/work/serve/serve.json' };
    const defaults = withServe({ bind: '0.0.0.0', host: 'gpu-1' }).policy.serve;
    if (defaults === undefined) throw new Error('no serve section');
    expect(serveLaunch(defaults, target)).toEqual({ command: '/venv/bin/python', args: ['-m', 'gymflow_trainer', 'serve', '--config', '/work/serve/serve.json'] });
    expect(serveConfigFile(defaults, target, 42)).toEqual({ checkpoint: '/work/checkouts/m', host: '0.0.0.0', port: 8000, served_model_name: 'exp-iter-1-x', parent_pid: 42 });
    const vllm = withServe({ port: 9000, command: ['vllm', 'serve', '{model}', '--host', '{host}', '--port', '{port}', '--served-model-name', '{name}', '--x={port}{other}'] }).policy.serve;
    if (vllm === undefined) throw new Error('no serve section');
    // Under the lifeline's supervisor, which stops it when the worker is gone.
    expect(serveLaunch(vllm, target)).toEqual({
      command: '/venv/bin/python',
      args: ['-m', 'gymflow_trainer.lifeline', '--', 'vllm', 'serve', '/work/checkouts/m', '--host', '127.0.0.1', '--port', '9000', '--served-model-name', 'exp-iter-1-x', '--x=9000{other}'],
    });
  });
});

describe('waitForModel', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** A real HTTP server whose /v1/models lists `models()` (a 503 while it returns undefined). */
  async function listing(models: () => string[] | undefined): Promise<string> {
    server = createServer((req, res) => {
      const ids = models();
      if (req.url !== '/v1/models' || ids === undefined) return void res.writeHead(req.url === '/v1/models' ? 503 : 404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: ids.map((id) => ({ id, object: 'model' })) }));
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server?.address() as AddressInfo).port}/v1`;
  }

  it('waits until the server lists the model, reporting what it saw meanwhile', async () => {
    let polls = 0;
    const url = await listing(() => (++polls < 2 ? undefined : polls < 3 ? ['exp-iter-0-init'] : ['exp-iter-0-init', 'exp-iter-1-abc']));
    const seen: string[] = [];
    await waitForModel(url, 'exp-iter-1-abc', { timeoutMs: 10_000, intervalMs: 20, onPoll: (p) => seen.push(p) });
    expect(seen).toEqual([`GET ${url}/models answered HTTP 503`, "the server lists 'exp-iter-0-init', not 'exp-iter-1-abc'"]);
  });

  it('gives up after the timeout, naming the last problem: another model, or nothing listening', async () => {
    const url = await listing(() => ['other']);
    await expect(waitForModel(url, 'mine', { timeoutMs: 200, intervalMs: 50 })).rejects.toThrow(
      `the policy server did not serve 'mine' at ${url} within 0 s (policy.serve.startup_timeout); last: the server lists 'other', not 'mine'`,
    );
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    await expect(waitForModel(url, 'mine', { timeoutMs: 200, intervalMs: 50 })).rejects.toThrow(/last: GET http:\/\/127\.0\.0\.1:\d+\/v1\/models failed: ECONNREFUSED/);
  });

  it('stops when aborted', async () => {
    const url = await listing(() => []);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    await expect(waitForModel(url, 'mine', { timeoutMs: 60_000, intervalMs: 20, signal: abort.signal })).rejects.toThrow(`stopped waiting for ${url} to serve mine`);
  });
});
