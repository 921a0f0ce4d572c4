/**
 * The OpenEnv bridge against the real openenv-core (PyPI, installed into .venv by setup): gymflow's client on a
 * server built with openenv-core's `create_app` (tests/openenv/guess_server.py), and openenv-core's own
 * `GenericEnvClient` on `gymflow serve-env` (tests/openenv/play_recorded.py), whole episodes both ways.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Agent, AgentContext, AgentDecision } from '../src/core/agent.js';
import { checkEnv } from '../src/core/check-env.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { make, spec } from '../src/core/registry.js';
import { runEpisode } from '../src/core/rollout.js';
import type { Action, AgentEnv, TaskInfo } from '../src/core/types.js';
import { isDone } from '../src/core/types.js';
import { Wrapper } from '../src/core/wrappers/wrapper.js';
import { evaluate } from '../src/eval/evaluate.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { OpenEnvEnv } from '../src/envs/openenv/env.js';
import { OpenEnvServerError } from '../src/envs/openenv/errors.js';
import { registerOpenEnv } from '../src/envs/openenv/register.js';
import { OpenEnvSession } from '../src/envs/openenv/session.js';
import { collect } from '../src/hub/collect.js';
import { requires } from './support/requires.js';

const PYTHON = join(PACKAGE_ROOT, '.venv', 'bin', 'python');
const openenv = requires.python(['openenv.core.env_server', 'openenv.core.generic_client', 'uvicorn']);

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Starts a child and resolves with the first match of `ready` on its stdout; its stderr goes into a failure. */
function startServer(command: string, args: string[], ready: RegExp, env: Record<string, string> = {}): Promise<{ child: ChildProcess; match: RegExpExecArray; stderr: () => string }> {
  const child = spawn(command, args, { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      const match = ready.exec(line);
      if (match) resolve({ child, match, stderr: () => stderr });
    });
    child.once('close', (code, signal) => reject(new Error(`${command} ${args.join(' ')} exited (${code ?? signal}) before it was ready:\n${stderr}`)));
  });
}

/** The guessing game of guess_server.py, served by openenv-core's create_app and uvicorn. */
async function guessServer(): Promise<{ url: string; child: ChildProcess }> {
  const { child, match } = await startServer(PYTHON, [join('tests', 'openenv', 'guess_server.py'), '--port', '0'], /^listening on (\d+)$/);
  return { url: `http://127.0.0.1:${match[1] as string}`, child };
}

// One server for the tests that leave it running (Python and its web stack take seconds to start); each of them
// plays in sessions of its own, as trainers do.
let shared: Promise<{ url: string; child: ChildProcess }> | undefined;
const sharedGuessServer = (): Promise<{ url: string; child: ChildProcess }> =>
  (shared ??= guessServer().then((s) => {
    children.splice(children.indexOf(s.child), 1); // not the test's to stop: afterAll stops it
    return s;
  }));
afterAll(async () => {
  const s = await shared;
  s?.child.kill('SIGKILL');
});

/** Plays the guessing game by bisection, from the observations alone: never more than 7 guesses. */
class Bisect implements Agent {
  readonly info = { name: 'bisect' };
  private low = 1;
  private high = 100;
  private last = 0;
  reset(): void {
    this.low = 1;
    this.high = 100;
  }
  act(ctx: AgentContext): Promise<AgentDecision> {
    if (/too low/.test(ctx.observation)) this.low = this.last + 1;
    if (/too high/.test(ctx.observation)) this.high = this.last - 1;
    this.last = Math.floor((this.low + this.high) / 2);
    const action: Action = { tool: 'act', params: { guess: this.last } };
    return Promise.resolve({ action });
  }
}

function unwrap(env: AgentEnv): AgentEnv {
  return env instanceof Wrapper ? env.unwrapped : env;
}

beforeAll(() => registerBuiltinEnvs());

openenv.describe("gymflow's OpenEnv client on an openenv-core server", () => {
  openenv.it("plays whole episodes through make('gymflow/openenv-v0', { kwargs: { url } }), and passes checkEnv", async () => {
    const { url } = await sharedGuessServer();
    const env = make('gymflow/openenv-v0', { kwargs: { url } });
    expect(env.tools).toEqual([
      {
        name: 'act',
        category: 'submit',
        description: 'Guess the secret number.',
        parameters: {
          additionalProperties: false,
          description: 'Guess the secret number.',
          properties: { guess: { description: 'Your guess, from 1 to 100.', maximum: 100, minimum: 1, title: 'Guess', type: 'integer' } },
          required: ['guess'],
          title: 'GuessAction',
          type: 'object',
        },
      },
    ]);
    const ids = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5]) {
      const t = await runEpisode(env, new Bisect(), { envId: 'gymflow/openenv-v0', seed });
      expect(t.task).toMatchObject({ id: `guessenvironment-seed-${seed}`, domain: 'generic', instruction: 'I am thinking of a number from 1 to 100. You have 10 guesses.' });
      expect(t.outcome).toMatchObject({ success: true, score: 1, terminated: true, truncated: false, reason: 'done' });
      expect(t.steps.length).toBeLessThanOrEqual(7);
      expect(t.steps.at(-1)?.observation).toMatch(/ is correct!$/);
      ids.add(t.id);
    }
    expect(ids.size).toBe(5);
    // The same seed, the same episode; the server's state of the session's environment.
    expect((await runEpisode(env, new Bisect(), { envId: 'gymflow/openenv-v0', seed: 3 })).steps.length).toBeGreaterThan(0);
    expect(await (unwrap(env) as OpenEnvEnv).state()).toMatchObject({ step_count: expect.any(Number) as number, episode_id: expect.any(String) as string });
    await env.close();
    const report = await checkEnv(() => make('gymflow/openenv-v0', { kwargs: { url } }), { seed: 7 });
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
  }, 60_000);

  openenv.it('collects and evaluates on it once registered, with task lists made from seeds', async () => {
    const { url } = await sharedGuessServer();
    await registerOpenEnv('openenv/guess-v0', { url, tasks: { train: 20, heldout: 5 } }, { replace: true });
    const resolveAgent = (): Agent => new Bisect();
    const { trajectories } = await collect({ envId: 'openenv/guess-v0', agent: 'bisect', resolveAgent, n: 6, concurrency: 3, seed: 2 });
    expect(trajectories.map((t) => t.outcome.success)).toEqual([true, true, true, true, true, true]);
    expect(trajectories.every((t) => /^guessenvironment-train-000\d\d$/.test(t.task.id))).toBe(true);
    const result = await evaluate({ envId: 'openenv/guess-v0', agent: 'bisect', resolveAgent, n: 5, concurrency: 2, resamples: 100 });
    expect(result.episodes.map((e) => [e.taskId, e.success])).toEqual([0, 1, 2, 3, 4].map((i) => [`guessenvironment-heldout-0000${i}`, true]));
  }, 60_000);

  openenv.it("reads the server's own refusal of an action (pydantic's validation) as VALIDATION_ERROR", async () => {
    const { url } = await sharedGuessServer();
    const session = await OpenEnvSession.open(`${url.replace('http', 'ws')}/ws`, { connectTimeoutMs: 10_000 });
    await session.request('reset', { seed: 1 }, 10_000);
    const err = await session.request('step', { guess: 500 }, 10_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenEnvServerError);
    expect(err).toMatchObject({ serverCode: 'VALIDATION_ERROR' });
    expect((err as Error).message).toMatch(/the server reports VALIDATION_ERROR: Invalid message: .*less_than_equal.*"loc":\["guess"\]/);
    await session.close();
  }, 60_000);

  openenv.it('ends the episode truncated when the server stops answering (timeout) or is killed mid-episode (server_gone)', async () => {
    const server = await guessServer();
    const slow = make('gymflow/openenv-v0', { kwargs: { url: server.url, timeoutMs: 1_000 } });
    const env = make('gymflow/openenv-v0', { kwargs: { url: server.url } });
    await slow.reset({ seed: 1 });
    await env.reset({ seed: 1 });
    expect(isDone(await env.step({ tool: 'act', params: { guess: 1 } }))).toBe(false);
    server.child.kill('SIGSTOP');
    try {
      const late = await slow.step({ tool: 'act', params: { guess: 1 } });
      expect(late).toMatchObject({ terminated: false, truncated: true, info: { reason: 'timeout' } });
      expect(late.observation).toMatch(/no answer to 'step' within 1000 ms$/);
    } finally {
      server.child.kill('SIGCONT');
    }
    server.child.kill('SIGKILL');
    const gone = await env.step({ tool: 'act', params: { guess: 2 } });
    expect(gone).toMatchObject({ terminated: false, truncated: true, info: { reason: 'server_gone' } });
    expect(gone.observation).toMatch(/^The episode ended: ws:\/\/127\.0\.0\.1:\d+\/ws: the OpenEnv server closed the connection \(code 1006/);
    await slow.close();
    await env.close();
  }, 60_000);
});

openenv.describe("openenv-core's client on `gymflow serve-env`", () => {
  openenv.it("plays the household expert's episodes over WebSocket, step for step as in-process", async () => {
    const { child, match, stderr } = await startServer(process.execPath, [join(PACKAGE_ROOT, 'bin', 'gymflow.js'), 'serve-env', '--env', 'gymflow/household-v0', '--port', '0'], /^serving gymflow\/household-v0 over OpenEnv at (http:\/\/127\.0\.0\.1:\d+) /);
    const url = match[1] as string;
    // What the expert does in-process, recorded for the Python client to replay.
    const episodes = [];
    for (const [task, seed] of [['household-heldout-00000', 1], ['household-heldout-00003', 2], ['household-train-00005', 3]] as const) {
      const env = make('gymflow/household-v0');
      const expert = spec('gymflow/household-v0').agents?.expert?.({ seed }) as Agent;
      let ts = await env.reset({ seed, task });
      const first = ts.observation;
      const info = ts.info.task as TaskInfo;
      const history: AgentContext['history'][number][] = [];
      const steps = [];
      while (!isDone(ts)) {
        const { action } = await expert.act({ task: info, tools: env.tools, observation: ts.observation, history, stepIndex: history.length });
        ts = await env.step(action);
        history.push({ action, observation: ts.observation, info: ts.info });
        steps.push({ action, observation: ts.observation, reward: ts.reward, done: isDone(ts) });
      }
      episodes.push({ task, seed, first, steps });
      await env.close();
    }
    const file = join(await mkdtemp(join(tmpdir(), 'gymflow-openenv-')), 'episodes.json');
    await writeFile(file, JSON.stringify({ url, episodes }));
    const play = spawn(PYTHON, [join('tests', 'openenv', 'play_recorded.py'), file], { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(play);
    let out = '';
    let err = '';
    play.stdout.on('data', (d: Buffer) => (out += d.toString()));
    play.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((resolve) => play.once('exit', resolve));
    expect([code, err.trim().split('\n').at(-1) ?? '']).toEqual([0, '']);
    const report = JSON.parse(out) as { schema_tools: string[]; episodes: { task: string; steps: number; mismatches: string[]; done: boolean; success: boolean; reason: string; state: { step_count: number; task_id: string } }[] };
    expect(report.schema_tools).toEqual(make('gymflow/household-v0').tools.map((t) => t.name));
    expect(report.episodes.map((e) => ({ task: e.task, mismatches: e.mismatches, done: e.done, success: e.success, reason: e.reason, stepCount: e.state.step_count, taskId: e.state.task_id }))).toEqual(
      episodes.map((e) => ({ task: e.task, mismatches: [], done: true, success: true, reason: 'goal_reached', stepCount: e.steps.length, taskId: e.task })),
    );

    // gymflow's own client on the command's server, from this process (its description read synchronously).
    const report2 = await checkEnv(() => make('gymflow/openenv-v0', { kwargs: { url } }), { seed: 3 });
    expect(report2.checks.filter((c) => !c.ok)).toEqual([]);

    child.kill('SIGINT');
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);
    expect(stderr()).toContain('gymflow serve-env: SIGINT: stopped');
  }, 120_000);
});

openenv.describe('the README: writing an environment and serving it over OpenEnv', () => {
  openenv.it("runs src/envs/README.md's example server, and its Python client plays it", async () => {
    const readme = await readFile(join(PACKAGE_ROOT, 'src', 'envs', 'README.md'), 'utf8');
    const serveExample = /<!-- openenv-serve-example -->\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    const clientExample = /<!-- openenv-client-example -->\n```python\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(serveExample).toContain("from 'gymflow/envs'");
    expect(clientExample).toContain('http://127.0.0.1:8001');
    // Inside the clone (its package.json makes `gymflow/…` resolve, to the build), in the ignored .gymflow/.
    await mkdir(join(PACKAGE_ROOT, '.gymflow'), { recursive: true });
    const dir = await mkdtemp(join(PACKAGE_ROOT, '.gymflow', 'openenv-example-'));
    try {
      const file = join(dir, 'serve.mts');
      await writeFile(file, serveExample as string);
      const tsx = join(PACKAGE_ROOT, 'node_modules', '.bin', 'tsx');
      const started = startServer(tsx, [file], /^serving acme\/reverse-v0 at (http:\/\/127\.0\.0\.1:\d+)$/, { PORT: '0' });
      const { match } = await started;
      const client = spawn(PYTHON, ['-c', (clientExample as string).replace('http://127.0.0.1:8001', match[1] as string)], { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(client);
      let out = '';
      let err = '';
      client.stdout.on('data', (d: Buffer) => (out += d.toString()));
      client.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise((resolve) => client.once('close', resolve));
      expect([code, out.trim(), err.trim().split('\n').at(-1) ?? '']).toEqual([0, '1 True True', '']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
