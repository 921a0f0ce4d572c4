/**
 * Serving the policy (`policy.serve`) as real activities (the SDK's MockActivityEnvironment supplies the
 * context) with the trainer's real server on a tiny checkpoint: the served policy sees the same prompt ids
 * and, greedy, picks the same tokens as its ONNX export run in-process; cancelling `servePolicy` leaves no
 * server behind; a checkpoint the server cannot load, and a command that dies, fail with their own message.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { make } from '../src/core/registry.js';
import { runEpisode } from '../src/core/rollout.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { registerBuiltinEnvs } from '../src/envs/register.js';
import { freePort } from '../src/runtime/dev-server.js';
import { parsePipelineConfig } from '../src/loop/config.js';
import { agentSpecFor, servedPolicy } from '../src/loop/plan.js';
import { resolveAgent } from '../src/policy/specs.js';
import { processesMentioning } from '../tests/support/processes.js';
import { requires } from '../tests/support/requires.js';
import { createServeActivities, servedLogFile } from './serve.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

const python = requires.python(['torch', 'transformers', 'onnx', 'onnxruntime', 'gymflow_trainer']);
const ENV = 'gymflow/tool-use-v0';

function run(args: string[], what: string): void {
  const r = spawnSync(join(PACKAGE_ROOT, '.venv', 'bin', 'python'), args, { encoding: 'utf8', timeout: 180_000, cwd: PACKAGE_ROOT });
  if (r.status !== 0) throw new Error(`${what} failed:\n${r.stdout}\n${r.stderr}`);
}

async function greedyEpisode(spec: string): Promise<Trajectory> {
  const agent = resolveAgent(spec, ENV, { seed: 0, local: { temperature: 0, maxNewTokens: 24 }, openai: { apiKey: 'EMPTY', temperature: 0, maxTokens: 24, returnTokenIds: true } });
  const env = make(ENV, { maxEpisodeSteps: 2 });
  try {
    return await runEpisode(env, agent, { envId: ENV, seed: 5 });
  } finally {
    await env.close();
    await agent.close?.();
  }
}

python.describe('servePolicy and awaitPolicyServer', () => {
  let root = '';
  let checkpoint = '';
  let onnx = '';

  beforeAll(() => {
    registerBuiltinEnvs();
    root = mkdtempSync(join(tmpdir(), 'gymflow-serve-'));
    checkpoint = join(root, 'ckpt');
    onnx = join(root, 'onnx');
    run(['-c', `from gymflow_trainer.tiny import save_tiny\nfrom gymflow_trainer.config import TinyModelConfig\nsave_tiny(${JSON.stringify(checkpoint)}, TinyModelConfig(max_position_embeddings=8192, seed=3))`], 'tiny model');
    writeFileSync(join(root, 'export.json'), JSON.stringify({ checkpoint, output_dir: onnx }));
    run(['-m', 'gymflow_trainer', 'export-onnx', '--config', join(root, 'export.json')], 'export-onnx');
  }, 240_000);
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** The activities' inputs for a policy at `checkpointPath`, served on a free port. */
  async function inputs(checkpointPath: string, serve: Record<string, unknown> = {}) {
    const config = parsePipelineConfig({ name: 'serve-test', env: ENV, policy: { init: { path: checkpointPath }, serve: { port: await freePort(), startup_timeout: '2m', ...serve } }, train: { command: 'sft' }, max_iterations: 1 }, 'test');
    const policy = { checkpointPath, iteration: 0 };
    const served = servedPolicy(config, policy);
    if (served === undefined || config.policy.serve === undefined) throw new Error('not served');
    const where = { store: join(root, 'store'), workDir: join(root, 'work') };
    return { policy, served, serveInput: { policy, served, serve: config.policy.serve, ...where } };
  }

  it('serves the checkpoint: prompts and greedy choices match the ONNX export; a cancel stops the server', { timeout: 180_000 }, async () => {
    const activities = createServeActivities({});
    const { policy, served, serveInput } = await inputs(checkpoint);
    const env = new MockActivityEnvironment();
    const serving = env.run(activities.servePolicy, serveInput);
    serving.catch(() => undefined);
    await new MockActivityEnvironment().run(activities.awaitPolicyServer, { served });

    const viaServer = await greedyEpisode(agentSpecFor('policy', policy, undefined, served));
    const inProcess = await greedyEpisode(`local:${onnx}`);
    expect(viaServer.agent.name).toBe(`openai:${served.model}`);
    const first = (t: Trajectory) => t.steps[0];
    expect(first(viaServer)?.tokens?.prompt).toEqual(first(inProcess)?.tokens?.prompt);
    expect(first(viaServer)?.tokens?.completion).toEqual(first(inProcess)?.tokens?.completion);
    expect(first(viaServer)?.logprobs?.length).toBe(first(inProcess)?.tokens?.completion?.length);
    // Torch and onnxruntime agree on the log-probs to float rounding.
    first(viaServer)?.logprobs?.forEach((lp, i) => expect(lp).toBeCloseTo(first(inProcess)?.logprobs?.[i] ?? NaN, 3));

    const configs = (): number[] => processesMentioning(join(root, 'work', 'serve'));
    expect(configs()).toHaveLength(1);
    env.cancel();
    await expect(serving).rejects.toBeInstanceOf(CancelledFailure);
    expect(configs()).toEqual([]);
  });

  it('fails for good on a directory that holds no model, naming it', { timeout: 120_000 }, async () => {
    const empty = mkdtempSync(join(tmpdir(), 'gymflow-serve-empty-'));
    const { serveInput } = await inputs(empty);
    const failure = await new MockActivityEnvironment().run(createServeActivities({}).servePolicy, serveInput).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).nonRetryable).toBe(true);
    expect((failure as ApplicationFailure).message).toContain(empty);
  });

  it('fails with the end of its stderr when a custom command dies, and retryably', { timeout: 60_000 }, async () => {
    const { serveInput } = await inputs(checkpoint, { command: ['sh', '-c', 'echo "cannot allocate {port}" >&2; exit 1', '{model}'] });
    const failure = await new MockActivityEnvironment().run(createServeActivities({}).servePolicy, serveInput).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).nonRetryable).toBe(false);
    expect((failure as ApplicationFailure).message).toMatch(new RegExp(`policy server serve-test-iter-0-init failed \\(exit 1\\): cannot allocate ${serveInput.serve.port}`));
    // Its whole output stays in the work directory, though its run directory is gone.
    const log = readFileSync(servedLogFile(join(root, 'work'), serveInput.served.model), 'utf8');
    expect(log).toMatch(new RegExp(`=== .* sh -c .*\ncannot allocate ${serveInput.serve.port}\n=== exit 1\n$`));
  });
});
