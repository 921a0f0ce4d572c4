/**
 * `gymflow mcp` as an MCP client meets it: the built CLI (`bin/gymflow.js mcp`) in a child process, driven through
 * the SDK's own `Client` over stdio and over Streamable HTTP, every tool called on real inputs — the shared
 * agent-log fixtures, a real Docker sandbox, real episodes and evaluations, a pipeline on a Temporal dev server with
 * a real CPU worker — and through the official Python client (`mcp` from PyPI) over stdio. Bad inputs per tool are
 * src/cli/mcp/server.test.ts'; here: the ones that need the real thing (a pipeline that does not exist, a sandbox
 * destroyed), progress, cancellation, the HTTP server's safety, and sandboxes removed when the server stops.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LoggingMessageNotificationSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defined } from '../src/core/defined.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { trajectoryJsonSchema } from '../src/core/trajectory.js';
import { SEARCH_ATTRIBUTES } from '../src/loop/search-attributes.js';
import { freePort, startDevServer, type DevServer } from '../src/runtime/dev-server.js';
import { dockerClient } from '../src/sandbox/docker.js';
import { runWorker as runCpuWorker } from '../workers/cpu.js';
import { runWorker as runGpuWorker } from '../workers/gpu.js';
import { requires, skipMissing } from './support/requires.js';

const docker = requires.docker();
const temporal = requires.temporal();
const python = requires.python(['mcp']);
/** The GPU worker's trainer: a run's setup checks the trainer configurations there before any cancel applies. */
const trainer = requires.python(['torch', 'gymflow_trainer']);

const BIN = join(PACKAGE_ROOT, 'bin', 'gymflow.js');
const FIXTURES = process.env['GYMFLOW_FIXTURES'] ?? join(PACKAGE_ROOT, '..', 'shared', 'fixtures', 'agent-logs');
/** Long calls (a pipeline's cancel with wait, a batch) get more than the SDK's 60 s default. */
const LONG = { timeout: 300_000 };

const base = mkdtempSync(join(tmpdir(), 'gymflow-mcp-'));
let temporalAddress = '127.0.0.1:1'; // nothing listens there: pipeline tools then fail fast, naming it
const cpuQueue = `mcp-${randomUUID().slice(0, 8)}`;

/** A workspace root holding a copy of the shared agent-log fixtures under logs/. */
function workspace(name: string): string {
  const root = join(base, name);
  mkdirSync(root);
  cpSync(FIXTURES, join(root, 'logs'), { recursive: true });
  return root;
}

/** The dev server and the CPU and GPU workers every pipeline test of the file shares. */
let devServer: DevServer | undefined;
const stopWorker = new AbortController();
let workers: Promise<unknown> | undefined;
beforeAll(async () => {
  if (!temporal.available) return;
  devServer = await startDevServer({ dbFilename: join(base, 'temporal.db'), port: await freePort(), headless: true, searchAttributes: SEARCH_ATTRIBUTES, logFile: join(base, 'temporal.log') });
  temporalAddress = devServer.address;
  const common = { address: temporalAddress, store: join(base, 'worker-store'), workDir: join(base, 'worker-work'), signal: stopWorker.signal, shutdownGraceMs: 1000, log: () => undefined };
  workers = Promise.all([
    runCpuWorker({ ...common, taskQueue: cpuQueue }),
    ...(trainer.available ? [runGpuWorker({ ...common, taskQueue: `${cpuQueue}-gpu`, killGraceMs: 3000 })] : []),
  ]);
  workers.catch(() => undefined);
});
afterAll(async () => {
  stopWorker.abort();
  await workers?.catch(() => undefined);
  await devServer?.stop();
  rmSync(base, { recursive: true, force: true });
});

/** A connected client and what the server told it besides replies. */
interface Connected {
  client: Client;
  logs: string[];
  /** Every progress notification the transport read, in order (see {@link recordProgress}). */
  progress: Progress[];
  stderr: () => string;
  close(): Promise<void>;
}

/**
 * Records each progress notification as the client's transport reads it, before the SDK's client dispatches it. The
 * client handles a notification a microtask after reading it but a response at once, so notifications read in the
 * same chunk as the response find their handler gone (Protocol._onnotification vs _onresponse,
 * @modelcontextprotocol/sdk 1.32): on a busy machine a whole fast call's notifications arrive with its result and
 * none reach `onprogress`. What the server sent is what the tests check.
 */
function recordProgress(transport: Transport): Progress[] {
  const seen: Progress[] = [];
  const dispatch = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && message.method === 'notifications/progress') {
      const { progress, total, message: text } = message.params as Progress;
      seen.push({ progress, ...defined({ total, message: text }) });
    }
    dispatch?.call(transport, message, extra);
  };
  return seen;
}

/** Starts `gymflow mcp` on `root` over stdio and connects the SDK's client to it. */
async function overStdio(root: string): Promise<Connected> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--root', root, '--address', temporalAddress], cwd: root, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'gymflow-test', version: '0' });
  await client.connect(transport);
  const logs: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
  return { client, logs, progress: recordProgress(transport), stderr: () => err, close: () => client.close() };
}

/** Starts `gymflow mcp --http ARGS` and resolves with the child and the URL it printed. */
async function startHttp(root: string, args: readonly string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '--port', '0', '--root', root, '--address', temporalAddress, ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gymflow mcp --http did not come up within 60 s:\n${err}`)), 60_000);
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /serving Streamable HTTP at (\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gymflow mcp --http exited with ${String(code)}:\n${err}`));
    });
  });
  return { child, url, stderr: () => err };
}

/** Starts `gymflow mcp --http` with a bearer token on `root` and connects the SDK's client to it. */
async function overHttp(root: string): Promise<Connected> {
  const token = randomUUID();
  const { child, url, stderr } = await startHttp(root, [], { GYMFLOW_MCP_TOKEN: token });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'gymflow-test', version: '0' });
  await client.connect(transport);
  const logs: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
  return {
    client,
    logs,
    progress: recordProgress(transport),
    stderr,
    async close() {
      await client.close();
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A successful call's structured result; fails the test with the server's words otherwise. With `onprogress` the call
 * asks for progress, and gets every notification the server sent for it (calls run one at a time), in order.
 */
async function call<T = Record<string, unknown>>(c: Connected, name: string, args: Record<string, unknown>, onprogress?: (p: Progress) => void): Promise<T> {
  const before = c.progress.length;
  const r = (await c.client.callTool({ name, arguments: args }, undefined, { ...LONG, ...(onprogress ? { onprogress: () => undefined } : {}) })) as CallToolResult;
  if (onprogress) c.progress.slice(before).forEach(onprogress);
  const text = r.content.map((x) => (x.type === 'text' ? x.text : '')).join('\n');
  expect(r.isError, `${name}(${JSON.stringify(args)}) failed: ${text}\n${c.stderr().slice(-2000)}`).toBeFalsy();
  return r.structuredContent as T;
}

/** A failing call's error text. */
async function failure(c: Connected, name: string, args: Record<string, unknown>): Promise<string> {
  const r = (await c.client.callTool({ name, arguments: args }, undefined, LONG)) as CallToolResult;
  const text = r.content.map((x) => (x.type === 'text' ? x.text : '')).join('\n');
  expect(r.isError, `${name}(${JSON.stringify(args)}) should fail; got ${text.slice(0, 500)}`).toBe(true);
  return text;
}

/** Progress notifications as the server sent them: one per unit of work, in order, each `total` as announced. */
function expectProgress(seen: readonly Progress[], units: number, total: number | undefined): void {
  expect(seen.map((p) => p.progress)).toEqual(Array.from({ length: units }, (_, i) => i + 1));
  for (const p of seen) expect(p.total).toBe(total);
}

/** Waits until `ok` holds, polling; the last value on time-out is in the error. */
async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await get();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 1500)}`);
}

/** A small trainingLoop (expert rollouts, one SFT step of a 1-layer model), which the test steers and cancels. */
function pipelineYaml(name: string): string {
  return `name: ${name}
env: gymflow/tool-use-v0
store: ${join(base, `store-${name}`)}
work_dir: ${join(base, `work-${name}`)}
task_queues: { cpu: ${cpuQueue}, gpu: ${cpuQueue}-gpu }
policy:
  init:
    tiny: { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, bpe_vocab_size: 0 }
collect: { agent: expert, tasks: 2, shard_size: 1, concurrency: 1 }
export: { success_only: true }
train:
  command: sft
  config: { max_steps: 1, batch_size: 2, max_length: 256 }
eval: { agent: expert, tasks: 2, baseline: false }
max_iterations: 1
`;
}

describe.each([
  ['stdio', overStdio],
  ['Streamable HTTP', overHttp],
] as const)('gymflow mcp over %s', (transport, connect) => {
  const tag = transport === 'stdio' ? 'stdio' : 'http';
  let root = '';
  let c: Connected;
  beforeAll(async () => {
    root = workspace(tag);
    c = await connect(root);
  });
  afterAll(async () => {
    await c?.close().catch(() => undefined);
  });

  it('lists every tool, with a description and an input schema', async () => {
    const tools = (await c.client.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['create_sandbox', 'execute_tool', 'convert_logs', 'score_trajectory', 'run_pipeline', 'pipeline_status', 'process_logs_batch']));
    expect(tools).toHaveLength(29);
  });

  it('recorder tools on the shared agent-log fixtures: convert, validate (file, line, path), schema, diff', async () => {
    const converted = await call<{ out: string; trajectories: number; problems: { file: string; path: string }[] }>(c, 'convert_logs', { path: 'logs', out: 'converted.jsonl' });
    expect(converted.out).toBe('converted.jsonl');
    expect(converted.trajectories).toBeGreaterThanOrEqual(15);
    for (const p of converted.problems) expect(p.file.startsWith('logs/') && p.path.startsWith('$')).toBe(true);
    const lines = readFileSync(join(root, 'converted.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(converted.trajectories);

    expect(await call(c, 'validate_logs', { path: 'converted.jsonl' })).toMatchObject({ format: 'gymflow', records: lines.length, valid: lines.length, errors: 0 });
    const second = JSON.parse(lines[1] as string) as { steps: { action: { tool: unknown } }[] };
    (second.steps[0] as { action: { tool: unknown } }).action.tool = null;
    writeFileSync(join(root, 'broken.jsonl'), [lines[0], JSON.stringify(second), lines[2]].join('\n'));
    const broken = await call<{ valid: number; problems: { file: string; line: number; path: string; message: string }[] }>(c, 'validate_logs', { path: 'broken.jsonl' });
    expect(broken.valid).toBe(2);
    expect(broken.problems[0]).toMatchObject({ file: 'broken.jsonl', line: 2, path: '$.steps[0].action.tool' });
    expect(await call(c, 'validate_logs', { path: 'logs/claude-code/session-v2.1.17-permission-denials.jsonl' })).toMatchObject({ format: 'claude-code', errors: 0 });

    expect(await call(c, 'get_schema', {})).toEqual({ schema: trajectoryJsonSchema() });

    // broken.jsonl's line 2 is left out: its trajectory 1 is converted.jsonl's 2.
    expect(await call(c, 'recorder_diff', { a: 'converted.jsonl', b: 'broken.jsonl', index_a: 2, index_b: 1 })).toMatchObject({ identical: true });
    const diff = await call<{ identical: boolean; firstDivergence?: { index: number } }>(c, 'recorder_diff', { a: 'converted.jsonl', b: 'converted.jsonl', index_a: 0, index_b: 1 });
    expect(diff.identical).toBe(false);
  });

  it('reward tools: score one trajectory (file and inline), process logs end to end, rubrics, leaderboard, export', async () => {
    const one = await call<{ id: string; reward: { total: number }; steps: unknown[]; out: string }>(c, 'score_trajectory', { file: 'converted.jsonl', index: 0, domain: 'coding', out: 'scored-one.jsonl' });
    expect(one.reward.total).toBeGreaterThanOrEqual(0);
    expect(one.steps.length).toBeGreaterThan(0);
    expect(existsSync(join(root, 'scored-one.jsonl'))).toBe(true);
    const inline = JSON.parse(readFileSync(join(root, 'converted.jsonl'), 'utf8').split('\n')[0] as string) as Record<string, unknown>;
    expect(await call(c, 'score_trajectory', { trajectory: inline, domain: 'coding' })).toMatchObject({ id: one.id, reward: { total: one.reward.total } });

    expect(await call(c, 'process_log', { path: 'logs/swe-agent/v1-fc-demo-marshmallow-1867.traj', domain: 'coding', out: 'processed-one.jsonl' })).toMatchObject({ scored: 1, errors: 0, out: 'processed-one.jsonl' });
    const progress: Progress[] = [];
    const batch = await call<{ scored: number; meanReward: number; trajectories: { file: string }[] }>(c, 'process_logs_batch', { path: 'logs', domain: 'coding', out: 'scored.jsonl' }, (p) => progress.push(p));
    expect(batch.scored).toBeGreaterThanOrEqual(15);
    expect(batch.trajectories[0]?.file).toMatch(/^logs\//);
    expectProgress(progress, batch.scored, undefined);

    const rubrics = await call<{ rubrics: { domain: string; layer: string; name: string }[] }>(c, 'list_rubrics', { domain: 'coding' });
    expect(rubrics.rubrics.every((r) => r.domain === 'coding')).toBe(true);
    expect(rubrics.rubrics.filter((r) => r.layer === 'rules').map((r) => r.name)).toEqual(['redundancy', 'regression', 'informationUse', 'efficiency']);
    expect(rubrics.rubrics.filter((r) => r.layer === 'judge').map((r) => r.name)).toContain('goalProgress');
    const board = await call<{ rows: { key: string; n: number }[] }>(c, 'reward_leaderboard', { file: 'scored.jsonl', by: 'agent' });
    expect(board.rows.reduce((a, r) => a + r.n, 0)).toBe(batch.scored);

    // Human labels on the scored trajectories (what a labeller would write): calibration fits and saves.
    const scored = readFileSync(join(root, 'scored.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; reward: { total: number } });
    writeFileSync(join(root, 'labels.jsonl'), scored.map((t, i) => `${JSON.stringify({ trajectoryId: t.id, score: Math.min(1, t.reward.total + (i % 3) * 0.1) })}\n`).join(''));
    const calibration = await call<{ out: string; pairs: number; level: string }>(c, 'calibrate_reward', { labels: 'labels.jsonl', scored: 'scored.jsonl', out: 'calibration.json' });
    expect(calibration).toMatchObject({ out: 'calibration.json', pairs: scored.length, level: 'trajectory' });
    expect(await call(c, 'score_trajectory', { file: 'scored.jsonl', domain: 'coding', calibration: 'calibration.json' })).toMatchObject({ reward: { layers: expect.objectContaining({ human: expect.any(Number) }) } });

    const exported = await call<{ records: number; out: string; ref: string }>(c, 'export_dataset', { format: 'sft', in: ['scored.jsonl'], out: 'sft.jsonl', name: 'mcp-sft' });
    expect(exported.records).toBeGreaterThan(0);
    expect(exported.ref).toMatch(/^sha256:/);
    expect(statSync(join(root, 'sft.jsonl')).size).toBeGreaterThan(0);
    expect(existsSync(join(root, '.gymflow', 'store'))).toBe(true);
  });

  it('environment and evaluation tools: episodes, preferences from them, evaluations with progress, a comparison', async () => {
    expect((await call<{ environments: { id: string }[] }>(c, 'list_environments', {})).environments.map((e) => e.id)).toContain('gymflow/tool-use-v0');
    mkdirSync(join(root, 'eps'));
    const expert = await call<{ outcome: { success: boolean }; task: { id: string } }>(c, 'run_episode', { env: 'gymflow/tool-use-v0', agent: 'expert', seed: 3, out: 'eps/expert.jsonl' });
    expect(expert.outcome.success).toBe(true);
    await call(c, 'run_episode', { env: 'gymflow/tool-use-v0', agent: 'random', seed: 3, task: expert.task.id, out: 'eps/random.jsonl' });
    await call(c, 'process_logs_batch', { path: 'eps', domain: 'tool-use', out: 'eps-scored.jsonl' });
    const prefs = await call<{ pairs: number; out: string }>(c, 'build_preferences', { file: 'eps-scored.jsonl', out: 'prefs.jsonl' });
    expect(prefs.pairs).toBe(1);
    expect(readFileSync(join(root, 'prefs.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);

    const progress: Progress[] = [];
    const e1 = await call<{ n: number; out: string }>(c, 'evaluate_agent', { env: 'gymflow/tool-use-v0', agent: 'expert', episodes: 40, concurrency: 1, resamples: 200, out: 'e-expert.json' }, (p) => progress.push(p));
    expect(e1.n).toBe(40);
    expectProgress(progress, 40, 40);
    await call(c, 'evaluate_agent', { env: 'gymflow/tool-use-v0', agent: 'random', episodes: 40, resamples: 200, out: 'e-random.json' });
    const cmp = await call<{ leaderboard: { label: string }[] }>(c, 'compare_evaluations', { results: ['e-expert.json', 'e-random.json'], metric: 'success', resamples: 200 });
    expect(cmp.leaderboard[0]?.label).toBe('expert');
  });

  it('honours cancellation: a cancelled evaluation stops starting episodes, writes nothing, and the server goes on', async () => {
    const aborter = new AbortController();
    let seen = 0;
    const cancelled = c.client.callTool({ name: 'evaluate_agent', arguments: { env: 'gymflow/tool-use-v0', agent: 'expert', episodes: 100_000, concurrency: 1, out: 'e-cancelled.json' } }, undefined, {
      ...LONG,
      signal: aborter.signal,
      onprogress: () => {
        seen += 1;
        if (seen === 3) aborter.abort('enough');
      },
    });
    await expect(cancelled).rejects.toThrow();
    const line = await until('the server to say where the evaluation stopped', async () => c.logs.find((l) => l.includes('evaluate_agent')), (l) => l !== undefined);
    const m = /cancelled: evaluate_agent: evaluate: cancelled after (\d+) of 100000 episodes/.exec(line ?? '');
    expect(m, line).not.toBeNull();
    expect(Number(m?.[1])).toBeLessThan(100_000);
    expect(existsSync(join(root, 'e-cancelled.json'))).toBe(false);
    expect(await call(c, 'list_sandboxes', {})).toEqual({ sandboxes: [] });
  });

  docker.it(
    'sandbox tools on a real Docker sandbox: create, tools, submit, snapshot, reset, replay, destroy',
    async () => {
      const made = await call<{ sandbox_id: string; task: string; container: string }>(c, 'create_sandbox', { task: 'celsius-sign' });
      expect(made.task).toBe('celsius-sign');
      const id = made.sandbox_id;
      const read = await call<{ observation: string; exitCode: number }>(c, 'execute_tool', { sandbox_id: id, tool: 'file_read', params: { path: 'units.py' } });
      expect(read.observation).toContain('- 32');
      expect(await call(c, 'execute_tool', { sandbox_id: id, tool: 'shell', params: { command: 'sed -i "s/- 32/+ 32/" units.py && echo note > notes.txt' } })).toMatchObject({ exitCode: 0 });
      expect(await call(c, 'execute_tool', { sandbox_id: id, tool: 'submit' })).toMatchObject({ observation: 'resolved', exitCode: 0 });
      expect(await failure(c, 'execute_tool', { sandbox_id: id, tool: 'file_read', params: {} })).toMatch(/file_read: .*path/);
      const snap = await call<{ file: string; added: string[]; modified: string[] }>(c, 'sandbox_snapshot', { sandbox_id: id, out: 'snap.tar' });
      expect(snap).toMatchObject({ file: 'snap.tar', added: ['notes.txt'], modified: ['units.py'] });
      expect(statSync(join(root, 'snap.tar')).size).toBeGreaterThan(0);
      expect(await failure(c, 'sandbox_snapshot', { sandbox_id: id, out: '../snap.tar' })).toMatch(/out: \.\.\/snap\.tar is outside the workspace root/);
      await call(c, 'reset_sandbox', { sandbox_id: id });
      expect((await call<{ observation: string }>(c, 'execute_tool', { sandbox_id: id, tool: 'file_read', params: { path: 'units.py' } })).observation).toContain('- 32');

      const episode = await call<{ outcome: { success: boolean }; steps: unknown[] }>(c, 'run_episode', { env: 'gymflow/sandbox-v0', agent: 'expert', task: 'celsius-sign', out: 'sb-episode.jsonl' });
      expect(episode.outcome.success).toBe(true);
      const steps: Progress[] = [];
      const replay = await call<{ firstDivergentStep: number | null; replayed: number; outcome: { replayed: boolean } }>(c, 'replay_trajectory', { trajectory: 'sb-episode.jsonl' }, (p) => steps.push(p));
      expect(replay).toMatchObject({ firstDivergentStep: null, replayed: episode.steps.length, outcome: { replayed: true } });
      expectProgress(steps, episode.steps.length, episode.steps.length);

      expect((await call<{ sandboxes: { sandbox_id: string }[] }>(c, 'list_sandboxes', {})).sandboxes.map((s) => s.sandbox_id)).toEqual([id]);
      await call(c, 'destroy_sandbox', { sandbox_id: id });
      expect(await failure(c, 'execute_tool', { sandbox_id: id, tool: 'shell', params: { command: 'true' } })).toMatch(new RegExp(`sandbox_id: no sandbox '${id}' in this server`));
      await expect(dockerClient().getContainer(made.container).inspect()).rejects.toThrow(/no such container/i);
    },
    300_000,
  );

  temporal.it(
    'pipeline tools on a Temporal dev server: start, status, pause, resume, cancel, list; a pipeline that does not exist',
    async (test) => {
      if (!trainer.available) skipMissing(test, 'python', trainer.reason ?? 'no trainer');
      const name = `mcp-${tag}-${randomUUID().slice(0, 6)}`;
      writeFileSync(join(root, 'pipeline.yaml'), pipelineYaml(name));
      const started = await call<{ workflowId: string; taskQueue: string }>(c, 'run_pipeline', { config: 'pipeline.yaml', workflow_id: name });
      expect(started).toMatchObject({ workflowId: name, taskQueue: cpuQueue });
      type Status = { status: string; pipelineStatus: { state: string; paused: boolean; stage: string } | null; problem?: string };
      const running = await until('the worker to answer pipeline_status', () => call<Status>(c, 'pipeline_status', { workflow_id: name }), (s) => s.pipelineStatus !== null && s.pipelineStatus.state !== 'starting');
      expect(running.status).toBe('RUNNING');
      expect(await call(c, 'pause_pipeline', { workflow_id: name })).toMatchObject({ workflowId: name, signal: 'pause', changed: true });
      await until('the pause to show', () => call<Status>(c, 'pipeline_status', { workflow_id: name }), (s) => s.pipelineStatus?.paused === true);
      expect(await call(c, 'pause_pipeline', { workflow_id: name })).toMatchObject({ changed: false });
      expect(await call(c, 'resume_pipeline', { workflow_id: name })).toMatchObject({ signal: 'resume', changed: true });
      const cancelled = await call<{ status: string; mode: string }>(c, 'cancel_pipeline', { workflow_id: name, mode: 'abort', reason: 'test', wait: true });
      expect(cancelled.mode).toBe('abort');
      expect(cancelled.status).not.toBe('RUNNING');
      expect((await call<Status>(c, 'pipeline_status', { workflow_id: name })).pipelineStatus?.state).toBe('cancelled');
      const listed = await until('the run in the visibility list', () => call<{ runs: { workflowId: string }[] }>(c, 'list_pipelines', { experiment: name }), (l) => l.runs.length > 0);
      expect(listed.runs[0]?.workflowId).toBe(name);

      for (const tool of ['pipeline_status', 'pause_pipeline', 'resume_pipeline', 'cancel_pipeline']) {
        expect(await failure(c, tool, { workflow_id: 'no-such-run-42' })).toMatch(/no workflow 'no-such-run-42' in namespace default at 127\.0\.0\.1:\d+/);
      }
      // A closed run cannot be paused: the error says so.
      expect(await failure(c, 'pause_pipeline', { workflow_id: name })).toMatch(new RegExp(`workflow '${name}' is already \\w+: nothing to pause`));
    },
    300_000,
  );

  docker.it(
    'removes the sandboxes it holds when the client goes',
    async () => {
      const made = await call<{ container: string }>(c, 'create_sandbox', {});
      await c.close();
      await until(
        'the container to be removed',
        () => dockerClient().getContainer(made.container).inspect().then(() => 'there', (err: unknown) => String(err)),
        (s) => /no such container/i.test(s),
      );
    },
    120_000,
  );
});

describe('gymflow mcp --http: safety', () => {
  let root = '';
  let server: { child: ChildProcess; url: string } | undefined;
  const token = randomUUID();
  beforeAll(async () => {
    root = join(base, 'http-safety');
    mkdirSync(root);
    server = await startHttp(root, ['--token', token]);
  });
  afterAll(() => void server?.child.kill('SIGTERM'));

  /** A raw POST of an initialize request with `headers`; resolves with the status and body. */
  function post(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
    const url = new URL(server?.url ?? '');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    return new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('binds 127.0.0.1 and refuses requests without the token, with another Host, from another Origin, elsewhere than /mcp', async () => {
    expect(server?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const auth = { authorization: `Bearer ${token}` };
    expect(await post('/mcp', {})).toMatchObject({ status: 401, body: expect.stringContaining('unauthorized') });
    expect(await post('/mcp', { authorization: 'Bearer wrong' })).toMatchObject({ status: 401 });
    expect(await post('/mcp', { ...auth, host: 'evil.example:80' })).toMatchObject({ status: 403, body: expect.stringContaining("Host 'evil.example:80' is not this server's") });
    expect(await post('/mcp', { ...auth, origin: 'https://evil.example' })).toMatchObject({ status: 403, body: expect.stringContaining('Origin') });
    expect(await post('/other', auth)).toMatchObject({ status: 404 });
    expect(await post('/mcp', { ...auth, 'mcp-session-id': 'no-such-session' })).toMatchObject({ status: 404, body: expect.stringContaining("no session 'no-such-session'") });
    const ok = await post('/mcp', { ...auth, origin: `http://localhost:${new URL(server?.url ?? '').port}` });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('"name":"gymflow"');
  });

  it('will not bind another address without a token', async () => {
    await expect(startHttp(root, ['--host', '0.0.0.0'], { GYMFLOW_MCP_TOKEN: '' })).rejects.toThrow(/--host 0\.0\.0\.0: serving beyond this machine needs a bearer token/);
  });
});

python.describe('gymflow mcp through the official Python MCP client (stdio)', () => {
  it('lists the tools and calls get_schema, convert_logs and score_trajectory', async () => {
    const root = workspace('python');
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(join(PACKAGE_ROOT, '.venv', 'bin', 'python'), [join(PACKAGE_ROOT, 'tests', 'support', 'mcp_client.py'), process.execPath, BIN, root, 'logs/swe-agent'], { timeout: 120_000 }, (err, out, errOut) =>
        err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out),
      );
    });
    const got = JSON.parse(stdout) as Record<string, { isError: boolean; structured: Record<string, unknown> | null; text: string }> & { server: string; tools: string[] };
    expect(got.server).toBe('gymflow');
    expect(got.tools).toEqual(expect.arrayContaining(['get_schema', 'convert_logs', 'score_trajectory']));
    expect(got['schema']).toMatchObject({ isError: false, structured: { schema: trajectoryJsonSchema() } });
    expect(got['convert']).toMatchObject({ isError: false, structured: { out: 'py-converted.jsonl', trajectories: 4, errors: 0 } });
    expect(readFileSync(join(root, 'py-converted.jsonl'), 'utf8').trim().split('\n')).toHaveLength(4);
    expect(got['score']).toMatchObject({ isError: false, structured: { domain: 'coding', reward: { total: expect.any(Number) } } });
    expect(got['bad']).toMatchObject({ isError: true, text: expect.stringContaining('expected string, received number at file') });
  });
});
