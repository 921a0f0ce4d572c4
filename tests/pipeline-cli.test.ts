/**
 * `gymflow dev` and `gymflow pipeline …` as a user runs them: the real CLI (`bin/gymflow.js`) in child
 * processes, against a real Temporal dev server and the real workers started by `gymflow dev`, plus the same
 * workflow started with the `temporal` CLI (`temporal workflow start --type trainingLoop --input-file`).
 * The runs use a tiny model and the expert agent, so a whole loop takes seconds of training.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatStatus, listQuery } from '../src/cli/commands/pipeline.js';
import { loadPipelineConfig } from '../src/runtime/config-file.js';
import { defaultWorkflowId } from '../src/loop/plan.js';
import { ensurePortFree, freePort } from '../src/runtime/dev-server.js';
import { freshStages, type IterationMetrics, type PipelineStatus } from '../src/loop/status.js';
import { runTemporal } from '../src/runtime/temporal-cli.js';
import { fastLoopYaml, gymflowIn as gymflow, startDev } from './support/cli.js';
import { requires } from './support/requires.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

const temporal = requires.temporal();
const python = requires.python(['torch', 'gymflow_trainer']);

const FAST_CONFIG = fastLoopYaml('clitest');



/** Whether process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function sampleStatus(): PipelineStatus {
  const stages = freshStages();
  stages.tasks = { state: 'done', durationMs: 120, ref: `sha256:${'a'.repeat(64)}` };
  stages.collect = { state: 'running', progress: { done: 3, total: 8, unit: 'episodes' }, note: '2 shards' };
  return {
    workflow: 'trainingLoop',
    experiment: 'demo',
    env: 'gymflow/tool-use-v0',
    state: 'running',
    stage: 'collect',
    iteration: 1,
    maxIterations: 3,
    phase: 'sft',
    algorithm: 'sft',
    paused: false,
    stages,
    progress: { done: 3, total: 8, unit: 'episodes' },
    artifacts: {},
    policy: { iteration: 0 },
    history: [{ iteration: 0, phase: 'sft', algorithm: 'baseline', success: { value: 0.25, low: 0.1, high: 0.5, n: 20 }, evalReward: 0.3, evalSteps: 4, wallMs: 65_000, refs: { policy: `sha256:${'b'.repeat(64)}`, checkpoint: `sha256:${'c'.repeat(64)}` } }],
    best: { iteration: 0, success: 0.25 },
    lastError: { stage: 'collect', message: 'worker lost', type: 'TimeoutFailure', at: '2026-01-01T00:00:00Z' },
    run: 2,
    runStartedAt: '2026-01-01T00:00:00Z',
    loopStartedAt: '2026-01-01T00:00:00Z',
  };
}

describe('gymflow pipeline: pure parts', () => {
  it('names runs <name>-<yyyymmdd-hhmmss> in UTC', () => {
    expect(defaultWorkflowId('demo', new Date(Date.UTC(2026, 2, 1, 4, 5, 6)))).toBe('demo-20260301-040506');
  });

  it('builds the visibility query from the filters, quoting values', () => {
    expect(listQuery({})).toBe('WorkflowType IN ("trainingLoop", "pipeline")');
    expect(listQuery({ experiment: 'a"b', status: 'Running' })).toBe(
      'WorkflowType IN ("trainingLoop", "pipeline") AND GymflowExperiment = "a\\"b" AND ExecutionStatus = "Running"',
    );
  });

  it('formats a status as header, stage table, history and last error', () => {
    const text = formatStatus(sampleStatus());
    expect(text).toContain('stage collect 3/8 episodes   iteration 1/3   phase sft');
    expect(text).toMatch(/collect\s+running\s+3\/8 episodes\s+2 shards/);
    expect(text).toMatch(/tasks\s+done\s+0\.1s\s+aaaaaaaaaaaa/);
    expect(text).toContain('0.250 [0.100, 0.500] n=20');
    expect(text).toContain('last error  [collect] TimeoutFailure: worker lost');
    expect(text).toContain('best        success 0.250 at iteration 0   policy sha256:bbbbbbbbbbbb   checkpoint sha256:cccccccccccc');
    expect(text).not.toContain('retention');
    // A pause still waiting shows; after the run ended, or while it is paused, it says nothing new.
    expect(formatStatus({ ...sampleStatus(), paused: true })).toContain('state       running (paused)   stage');
    for (const state of ['paused', 'cancelled'] as const) expect(formatStatus({ ...sampleStatus(), state, paused: true })).toContain(`state       ${state}   stage`);
    expect(formatStatus({ ...sampleStatus(), retention: { pruned: [`sha256:${'d'.repeat(64)}`, `sha256:${'e'.repeat(64)}`] } })).toContain('retention   pruned 2 model artifacts after this iteration');
    // RL iterations show the policy's entropy and the rollout engine's gap beside the train loss; SFT ones leave them empty
    const base = sampleStatus();
    const train = { loss: 0.25, steps: 4, entropy: 1.5, mismatchKl: 3.14e-9 };
    const rl = { ...(base.history[0] as IterationMetrics), iteration: 1, phase: 'rl', algorithm: 'rl', train };
    const sft = { ...rl, iteration: 2, phase: 'sft', algorithm: 'sft', train: { loss: 0.75, steps: 3 } };
    const table = formatStatus({ ...base, history: [...base.history, rl, sft] }).split('\n');
    expect(table.find((l) => l.includes('held-out success'))).toMatch(/loss\s+entropy\s+mismatch\s+train steps/);
    expect(table.find((l) => /^\s*1\s+rl/.test(l))).toMatch(/0\.250\s+1\.500\s+3\.1e-9\s+4\s/);
    expect(table.find((l) => /^\s*2\s+sft/.test(l))).toMatch(/0\.750\s+3\s/);
    expect(formatStatus({ ...sampleStatus(), retention: { pruned: [], error: 'store is read-only' } })).toContain('retention   could not prune: store is read-only');
    // pass^k: a column only when an evaluation ran trials (eval.repeats), its largest k
    expect(table.find((l) => l.includes('held-out success'))).not.toContain('pass^k');
    const trials = { ...rl, passK: [{ k: 1, value: 0.25, low: 0.1, high: 0.5 }, { k: 3, value: 0.125, low: 0, high: 0.3 }] };
    const withPassK = formatStatus({ ...base, history: [...base.history, trials] }).split('\n');
    expect(withPassK.find((l) => l.includes('held-out success'))).toMatch(/held-out success \[95% CI\]\s+pass\^k\s+reward/);
    expect(withPassK.find((l) => /^\s*1\s+rl/.test(l))).toMatch(/n=20\s+0\.125 \(k=3\)\s/);
    // The calibration error and one column per benchmark (eval.benchmarks), only when some iteration has them
    expect(table.find((l) => l.includes('held-out success'))).not.toMatch(/calibration|hle/);
    const hle = { ...rl, calibrationError: 0.05, benchmarks: { hle: { success: { value: 0.6, low: 0.231, high: 0.882, n: 5 }, calibrationError: 0.2, ref: 'sha256:e' } } };
    const down = { ...sft, benchmarks: { hle: { error: 'judge down' } } };
    const withBenchmarks = formatStatus({ ...base, history: [...base.history, hle, down] }).split('\n');
    expect(withBenchmarks.find((l) => l.includes('held-out success'))).toMatch(/held-out success \[95% CI\]\s+calibration error\s+hle \[95% CI\]\s+reward/);
    expect(withBenchmarks.find((l) => /^\s*1\s+rl/.test(l))).toMatch(/n=20\s+0\.050\s+0\.600 \[0\.231, 0\.882\] cal 0\.200\s/);
    expect(withBenchmarks.find((l) => /^\s*2\s+sft/.test(l))).toMatch(/n=20\s+failed\s/);
    // Asynchronous RL: the next iteration's collection beside this one's training, as rows of its own
    const next = { iteration: 2, policyVersion: 0, stages: { tasks: { state: 'done' as const, durationMs: 40 }, collect: { state: 'running' as const, progress: { done: 5, total: 12, unit: 'episodes' }, note: '1/3 shards' } } };
    const beside = formatStatus({ ...base, next }).split('\n');
    expect(beside.find((l) => l.startsWith('tasks (iter 2)'))).toMatch(/done\s+0\.0s/);
    expect(beside.find((l) => l.startsWith('collect (iter 2)'))).toMatch(/running\s+5\/12 episodes\s+policy version 0; 1\/3 shards/);
    expect(table.some((l) => l.includes('(iter '))).toBe(false);
  });

  it('start validates the configuration before connecting, naming file, line and field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-cli-'));
    try {
      await writeFile(join(dir, 'bad.yaml'), FAST_CONFIG.replace('tasks: 4, shard_size', 'tasks: -4, shard_size'));
      // Port 1: nothing listens there, so reaching the server would fail differently.
      const r = await gymflow(['pipeline', 'start', 'bad.yaml', '--address', '127.0.0.1:1'], dir);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/bad\.yaml:7 \$\.collect\.tasks: /);
      expect(r.stderr).not.toContain('cannot reach');
      const ok = await gymflow(['pipeline', 'start', join(PACKAGE_ROOT, 'examples', 'smoke.yaml'), '--address', '127.0.0.1:1'], dir);
      expect(ok.code).toBe(1);
      expect(ok.stderr).toContain('cannot reach Temporal at 127.0.0.1:1');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('both examples are valid configurations', async () => {
    const smoke = await loadPipelineConfig(join(PACKAGE_ROOT, 'examples', 'smoke.yaml'));
    expect(smoke.max_iterations).toBe(1);
    const demo = await loadPipelineConfig(join(PACKAGE_ROOT, 'examples', 'demo.yaml'));
    expect(demo.phases.map((p) => [p.name, p.train.command, p.collect.agent, p.collect.shard_execution])).toEqual([
      ['sft', 'sft', 'flawed', 'local'],
      ['rl', 'rl', 'policy', 'activity'],
    ]);
    // the demo's shape (docs/trainer.md, "RL that learns"): one SFT iteration on the flawed demonstrator, four RL
    // iterations, every held-out task evaluated, the tokenizer learnt from what the SFT imitates
    expect([demo.env, demo.max_iterations, demo.phases.map((p) => p.iterations), demo.eval.tasks, demo.policy.init]).toMatchObject([
      'gymflow/recall-v0',
      5,
      [1, 4],
      400,
      { tokenizer_corpus: 'flawed' },
    ]);
  });
});

temporal.describe('gymflow dev and gymflow pipeline against a dev server', () => {
  let dir = '';
  let port = 0;
  let address = '';
  let dev: ChildProcess | undefined;
  let devOut: () => string = () => '';
  let devExit: Promise<number | null> | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gymflow-dev-'));
    port = await freePort();
    address = `127.0.0.1:${port}`;
    await writeFile(join(dir, 'fast.yaml'), FAST_CONFIG);
    const started = await startDev(['--headless', '--port', String(port), '--db', 'state/temporal.db', '--store', 'store', '--grace', '20'], dir);
    dev = started.child;
    devExit = started.exit;
    devOut = started.output;
  }, 180_000);

  afterAll(async () => {
    if (dev?.exitCode === null) dev.kill('SIGTERM');
    await devExit;
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it('prints the address and both workers, and refuses a second stack on the same port or database', async () => {
    expect(devOut()).toMatch(new RegExp(`Temporal: {2}${address} \\(namespace default, pid \\d+\\)`));
    expect(devOut()).toMatch(/workers: {3}cpu on gymflow \(pid \d+\), gpu on gymflow-gpu \(pid \d+\)/);
    const second = await gymflow(['dev', '--headless', '--port', String(port), '--db', 'other.db'], dir, 90_000);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
    // Another port but the same database: two servers would fight over it.
    const shared = await gymflow(['dev', '--headless', '--port', String(await freePort()), '--db', 'state/temporal.db', '--no-workers'], dir, 90_000);
    expect(shared.code).toBe(1);
    expect(shared.stderr).toMatch(new RegExp(`gymflow: the database .*state/temporal\\.db is in use by another Temporal dev server \\(started by pid \\d+\\)`));
    const high = await gymflow(['dev', '--port', '65000', '--db', 'x.db'], dir, 90_000);
    expect(high.stderr.trim()).toBe('gymflow: the Web UI would listen on port 66000 (--port 65000 + 1000), above 65535: pass --ui-port, or --headless');
  }, 240_000);

  python.it('pipeline start --wait runs a loop to completion; status, list and --json agree', async () => {
    const started = await gymflow(['pipeline', 'start', 'fast.yaml', '--id', 'cli-wait', '--address', address, '--wait', '--json'], dir, 300_000);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stderr).toBe('');
    const result = JSON.parse(started.stdout) as { status: string; pipelineStatus: PipelineStatus };
    expect(result.status).toBe('COMPLETED');
    expect(result.pipelineStatus).toMatchObject({ state: 'completed', experiment: 'clitest', iteration: 1 });
    expect(result.pipelineStatus.history.at(-1)).toMatchObject({ iteration: 1, algorithm: 'sft', train: { steps: 2 } });

    const status = await gymflow(['pipeline', 'status', 'cli-wait', '--address', address], dir);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/state\s+completed/);
    expect(status.stdout).toMatch(/train\s+done/);
    // The best line names the best iteration's checkpoint, and `store checkout` writes it out of the workers' store.
    const best = /^best .* checkpoint (sha256:[0-9a-f]{12})$/m.exec(status.stdout)?.[1];
    expect(best, status.stdout).toBeDefined();
    const checkout = await gymflow(['store', 'checkout', best as string, 'best-checkpoint', '--store', 'store'], dir);
    expect(checkout.code, checkout.stderr).toBe(0);
    expect(checkout.stdout).toMatch(/checkpoint -> best-checkpoint \(\d+ files, /);
    expect(await readdir(join(dir, 'best-checkpoint'))).toEqual(expect.arrayContaining(['config.json', 'model.safetensors', 'tokenizer.json']));

    // The trainer's output stays with the run directory after its checkpoints were stored and released.
    const logs = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(join('iter-1-sft', 'trainer.log')));
    expect(logs).toHaveLength(1);
    expect(await readFile(join(dir, logs[0] as string), 'utf8')).toMatch(/^=== .* -m gymflow_trainer sft --config [^]*"event":"done"[^]*=== exit 0\n$/);

    const list = await gymflow(['pipeline', 'list', '--experiment', 'clitest', '--address', address, '--json'], dir);
    const rows = JSON.parse(list.stdout) as { workflowId: string; experiment: string; env: string; status: string }[];
    expect(rows.find((r) => r.workflowId === 'cli-wait')).toMatchObject({ experiment: 'clitest', env: 'gymflow/tool-use-v0', status: 'COMPLETED' });
    const none = await gymflow(['pipeline', 'list', '--experiment', 'no-such-experiment', '--address', address], dir);
    expect(none.stdout.trim()).toBe('no runs');

    const missing = await gymflow(['pipeline', 'status', 'no-such-run', '--address', address], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no workflow 'no-such-run' in namespace default");
  }, 320_000);

  python.it('the same workflow starts with `temporal workflow start --input-file` and answers `temporal workflow query`', async () => {
    const config = await loadPipelineConfig(join(dir, 'fast.yaml'));
    await writeFile(join(dir, 'config.json'), JSON.stringify({ ...config, name: 'clitemporal' }));
    const common = ['--address', address, '--workflow-id', 'cli-temporal'];
    await runTemporal(['workflow', 'start', '--type', 'trainingLoop', '--task-queue', 'gymflow', '--input-file', join(dir, 'config.json'), ...common]);
    const result = await runTemporal(['workflow', 'result', ...common, '--output', 'json'], { timeoutMs: 300_000 });
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'COMPLETED' });
    const query = await runTemporal(['workflow', 'query', ...common, '--type', 'pipeline_status', '--output', 'json']);
    const answer = JSON.parse(query.stdout) as { queryResult: [PipelineStatus] };
    expect(answer.queryResult[0]).toMatchObject({ state: 'completed', experiment: 'clitemporal', iteration: 1 });
    // The workflow sets its search attributes itself when the starter did not.
    const listed = await runTemporal(['workflow', 'list', '--address', address, '--query', 'GymflowExperiment = "clitemporal"', '--output', 'json']);
    expect(listed.stdout).toContain('cli-temporal');
  }, 320_000);

  python.it('pause, resume and cancel steer a run', async () => {
    const status = async (id: string): Promise<PipelineStatus> => {
      const r = await gymflow(['pipeline', 'status', id, '--address', address, '--json'], dir);
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { pipelineStatus: PipelineStatus }).pipelineStatus;
    };
    /** Polls until the run reaches `state` (a pause takes effect at the gate before the next stage). */
    const reaches = async (id: string, state: PipelineStatus['state']): Promise<PipelineStatus> => {
      for (let i = 0; i < 90; i++) {
        const s = await status(id);
        if (s.state === state) return s;
        if (s.state === 'failed' || (s.state === 'completed' && state !== 'completed')) throw new Error(`${id} ended (${s.state}) instead of reaching ${state}`);
      }
      throw new Error(`${id} never reached ${state}`);
    };
    const start = async (id: string): Promise<void> => {
      const r = await gymflow(['pipeline', 'start', 'fast.yaml', '--id', id, '--address', address, '--json'], dir);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ workflowId: id, workflow: 'trainingLoop', taskQueue: 'gymflow' });
      // Paused right away: the run waits at its next gate, so nothing below races with it finishing.
      expect((await gymflow(['pipeline', 'pause', id, '--address', address], dir)).stdout).toContain(`sent pause to ${id}`);
      expect(await reaches(id, 'paused')).toMatchObject({ paused: true });
    };

    // pause + resume: the run goes on to complete.
    await start('cli-resume');
    expect((await gymflow(['pipeline', 'resume', 'cli-resume', '--address', address], dir)).code).toBe(0);
    expect(await reaches('cli-resume', 'completed')).toMatchObject({ paused: false, stopReason: 'max_iterations' });

    // pause + cancel: the paused run stops without running another activity.
    await start('cli-steer');
    const cancel = await gymflow(['pipeline', 'cancel', 'cli-steer', '--reason', 'test', '--wait', '--address', address, '--json'], dir, 300_000);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout)).toMatchObject({ workflowId: 'cli-steer', mode: 'finish', reason: 'test', status: 'COMPLETED' });
    // `paused` shows as soon as the signal lands; an activity already running then finishes first (finish mode).
    expect(await status('cli-steer')).toMatchObject({ stopReason: 'cancelled', cancel: { mode: 'finish', reason: 'test', activity: expect.stringMatching(/^(none|finished)$/) } });
    // The run is closed now: a second cancel says so instead of "not found".
    const again = await gymflow(['pipeline', 'cancel', 'cli-steer', '--address', address], dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("workflow 'cli-steer' is already COMPLETED: nothing to cancel");
  }, 320_000);

  python.it('pipeline continue goes on after a finished run, and restarts a cancelled one with an amended configuration', async () => {
    type Waited = { workflowId: string; status: string; pipelineStatus: PipelineStatus; continued: { workflowId: string; status: string; iteration: number } };
    // cli-wait finished its one iteration: going on needs room for another.
    const full = await gymflow(['pipeline', 'continue', 'cli-wait', '--address', address], dir);
    expect(full.code).toBe(1);
    expect(full.stderr).toContain("workflow 'cli-wait' continues at iteration 2, past max_iterations 1: raise it (--max-iterations 2 or more");
    const more = await gymflow(['pipeline', 'continue', 'cli-wait', '--max-iterations', '2', '--wait', '--json', '--address', address], dir, 300_000);
    expect(more.code, more.stderr).toBe(0);
    const extended = JSON.parse(more.stdout) as Waited;
    expect(extended).toMatchObject({ workflowId: 'cli-wait', status: 'COMPLETED', continued: { workflowId: 'cli-wait', status: 'COMPLETED', iteration: 2 } });
    // One history: iteration 1 from the first run, iteration 2 trained from its policy by the continuation.
    expect(extended.pipelineStatus.history.map((h) => h.iteration)).toEqual([1, 2]);
    expect(extended.pipelineStatus).toMatchObject({ state: 'completed', iteration: 2, maxIterations: 2, stopReason: 'max_iterations', policy: { iteration: 2 } });
    expect(extended.pipelineStatus.run).toBeGreaterThan(1);
    const [first, second] = extended.pipelineStatus.history.map((h) => h.refs?.checkpoint);
    expect(first).toBeDefined();
    const lineage = await gymflow(['store', 'lineage', second as string, '--store', 'store', '--json'], dir);
    expect(lineage.stdout).toContain(first); // iteration 2 trained from the checkpoint of iteration 1

    // cli-steer was cancelled before its first iteration: it starts over, with an amended train.config.
    await writeFile(join(dir, 'amended.yaml'), FAST_CONFIG.replace('max_steps: 2', 'max_steps: 3'));
    await writeFile(join(dir, 'other.yaml'), FAST_CONFIG.replace('name: clitest', 'name: another'));
    const other = await gymflow(['pipeline', 'continue', 'cli-steer', 'other.yaml', '--address', address], dir);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`other.yaml $.name: "another" differs from the continued run's "clitest" (workflow 'cli-steer')`);
    const again = await gymflow(['pipeline', 'continue', 'cli-steer', 'amended.yaml', '--wait', '--json', '--address', address], dir, 300_000);
    expect(again.code, again.stderr).toBe(0);
    const restarted = JSON.parse(again.stdout) as Waited;
    expect(restarted).toMatchObject({ status: 'COMPLETED', continued: { workflowId: 'cli-steer', iteration: 1 }, pipelineStatus: { stopReason: 'max_iterations' } });
    expect(restarted.pipelineStatus.history.map((h) => [h.iteration, h.train?.steps])).toEqual([[1, 3]]);

    const running = await gymflow(['pipeline', 'continue', 'no-such-run', '--address', address], dir);
    expect(running.stderr).toContain("no workflow 'no-such-run' in namespace default");
  }, 320_000);

  it('Ctrl-C (SIGTERM) stops workers, then the server, and frees the port', async () => {
    dev?.kill('SIGTERM');
    expect(await devExit).toBe(0);
    expect(devOut()).toMatch(/cpu worker stopped/);
    expect(devOut()).toMatch(/gpu worker stopped/);
    expect(devOut()).toContain('Temporal dev server stopped');
    await ensurePortFree('127.0.0.1', port, 'test');
  }, 120_000);
});

temporal.describe('gymflow dev that is killed or loses its terminal', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gymflow-dev-kill-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('killed with -9, it leaves no dev server or worker behind, and its port is free again', async () => {
    const port = await freePort();
    const stack = await startDev(['--headless', '--port', String(port), '--db', 'kill.db', '--store', 'store'], dir);
    const pids = [...stack.output().matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(3); // the server and both workers
    stack.child.kill('SIGKILL');
    await stack.exit;
    // Each child gets SIGTERM from the kernel as its parent dies, and stops gracefully (no activity is running).
    const deadline = Date.now() + 60_000;
    while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(pids.filter(alive)).toEqual([]);
    await ensurePortFree('127.0.0.1', port, 'test');
  }, 240_000);

  it('on SIGHUP (its terminal closed) it stops the server as on Ctrl-C', async () => {
    const port = await freePort();
    const stack = await startDev(['--headless', '--no-workers', '--port', String(port), '--db', 'hup.db'], dir);
    stack.child.kill('SIGHUP');
    expect(await stack.exit).toBe(0);
    expect(stack.output()).toContain('gymflow dev: SIGHUP: stopping');
    expect(stack.output()).toContain('Temporal dev server stopped');
    await ensurePortFree('127.0.0.1', port, 'test');
  }, 240_000);
});
