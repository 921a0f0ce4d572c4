import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { continuation, parseRunInput, type ClosedRun } from './continuation.js';
import { type PipelineConfig } from './config.js';
import { loadPipelineConfig } from '../runtime/config-file.js';
import type { IterationMetrics, LoopState } from './status.js';
import { PACKAGE_ROOT } from '../core/package-root.js';

describe('continuing a closed trainingLoop run', () => {
  let config: PipelineConfig;
  beforeAll(async () => {
    config = await loadPipelineConfig(path.join(PACKAGE_ROOT, 'examples', 'smoke.yaml'));
  });
  const metrics = (iteration: number): IterationMetrics => ({ iteration, phase: 'sft', algorithm: 'sft', wallMs: 1000 }) as IterationMetrics;
  /** The state the run's last execution started from: iteration 3, with the policy of iteration 2. */
  const state = (): LoopState => ({
    iteration: 3,
    policy: { iteration: 2, checkpointRef: 'sha256:c2', onnxRef: 'sha256:o2' },
    history: [metrics(1), metrics(2)],
    paused: true,
    runs: 2,
    loopStartedAt: '2026-11-20T10:00:00.000Z',
    setupDone: true,
  });
  const run = (over: Partial<ClosedRun>): ClosedRun => ({
    workflowId: 'exp-1',
    type: 'trainingLoop',
    status: 'FAILED',
    startTime: new Date('2026-11-22T10:00:00.000Z'),
    config: { ...config, max_iterations: 5 },
    state: state(),
    ...over,
  });

  it('runs the iteration a failed run stopped in again, from the policy before it, and checks the configuration again', () => {
    const next = continuation(run({ status: 'FAILED' }));
    expect(next.iteration).toBe(3);
    expect(next.state).toEqual({ ...state(), paused: false, setupDone: false });
    expect(next.config.max_iterations).toBe(5);
    expect(next.summary).toBe('iteration 3 again (the run was failed in it), from the policy of iteration 2');
    for (const status of ['TERMINATED', 'TIMED_OUT', 'CANCELLED']) expect(continuation(run({ status })).state?.iteration).toBe(3);
  });

  it('keeps the rollouts an asynchronous run collected for the iteration it runs again; a finished run hands none on', () => {
    const pending = { iteration: 3, shards: ['sha256:s1'], tasks: 'sha256:t3', policyVersion: 1, episodes: 8, collectMs: 1200 };
    const failed = continuation(run({ status: 'FAILED', state: { ...state(), pending } }));
    // Iteration 3 trains the policy of iteration 2 again on the rollouts of version 1: still one version behind.
    expect(failed.state?.pending).toEqual(pending);
    const finished = continuation(run({ status: 'COMPLETED', state: { ...state(), pending }, result: { stopReason: 'max_iterations', history: [metrics(1), metrics(2), metrics(3)], policy: { iteration: 3 }, runs: 3 } }));
    expect(finished.state?.iteration).toBe(4);
    expect(finished.state?.pending).toBeUndefined();
  });

  it('does the same for a run stopped by a cancel signal (it completes with stopReason cancelled)', () => {
    const cancelled = continuation(run({ status: 'COMPLETED', result: { stopReason: 'cancelled', history: [metrics(1), metrics(2)], policy: state().policy, runs: 3 } }));
    expect(cancelled.state).toMatchObject({ iteration: 3, policy: { iteration: 2 }, setupDone: false });
    expect(cancelled.summary).toContain('(the run was cancelled in it)');
  });

  it('goes on after the last iteration of a finished run, with its last policy', () => {
    const last = { iteration: 3, checkpointRef: 'sha256:c3', onnxRef: 'sha256:o3' };
    const done = run({ status: 'COMPLETED', config: { ...config, max_iterations: 3 }, result: { stopReason: 'max_iterations', history: [metrics(1), metrics(2), metrics(3)], policy: last, runs: 3 } });
    expect(() => continuation(done)).toThrow("workflow 'exp-1' continues at iteration 4, past max_iterations 3: raise it (--max-iterations 4 or more, or in the configuration)");
    const next = continuation(done, { maxIterations: 6 });
    expect(next.iteration).toBe(4);
    expect(next.config.max_iterations).toBe(6);
    expect(next.state).toEqual({ iteration: 4, policy: last, history: [metrics(1), metrics(2), metrics(3)], paused: false, runs: 3, loopStartedAt: '2026-11-20T10:00:00.000Z', setupDone: false });
    expect(next.summary).toBe("iteration 4 after the run's last (it stopped: max_iterations), from the policy of iteration 3");
  });

  it('starts afresh when the run stopped in its first execution, as starting it again would', () => {
    const next = continuation(run({ state: undefined }));
    expect(next.state).toBeUndefined();
    expect(next.iteration).toBe(config.eval.baseline ? 0 : 1);
    expect(next.summary).toBe('from the start (the run was failed before its first iteration completed)');
  });

  it('takes an amended configuration of the same experiment, and refuses one of another', () => {
    const amended = { ...config, max_iterations: 9 };
    expect(continuation(run({}), { amended, amendedFile: 'b.yaml' }).config).toBe(amended);
    expect(() => continuation(run({}), { amended: { ...config, name: 'other' }, amendedFile: 'b.yaml' })).toThrow(
      `b.yaml $.name: "other" differs from the continued run's "${config.name}" (workflow 'exp-1'); a continuation keeps the experiment's name, env, store`,
    );
    expect(() => continuation(run({}), { amended: { ...config, store: '/elsewhere' }, amendedFile: 'b.yaml' })).toThrow(/b\.yaml \$\.store: "\/elsewhere" differs/);
  });

  it('refuses a run that is still open, and a one-pass pipeline run', () => {
    expect(() => continuation(run({ status: 'RUNNING' }))).toThrow("workflow 'exp-1' is still running: cancel it first (gymflow pipeline cancel exp-1 --wait), or let it finish");
    expect(() => continuation(run({ type: 'pipeline' }))).toThrow("workflow 'exp-1' is a pipeline run: only a trainingLoop continues");
  });

  it('checks the run input it is given: the configuration through the pipeline schema, the state for what it uses', () => {
    const raw = { name: 'raw', env: 'gymflow/tool-use-v0', policy: { init: { tiny: {} } }, train: { command: 'sft' }, max_iterations: 2 };
    const parsed = parseRunInput([raw], 'exp-1');
    expect(parsed.state).toBeUndefined();
    expect(parsed.config.eval.baseline).toBe(true); // defaults filled in, as the loop's own setup does
    expect(parseRunInput([JSON.parse(JSON.stringify(config)), state()], 'exp-1').state).toEqual(state());
    expect(() => parseRunInput([{ ...raw, env: 7 }], 'exp-1')).toThrow("workflow 'exp-1' input [0] $.env");
    expect(() => parseRunInput([raw, { iteration: -1 }], 'exp-1')).toThrow("workflow 'exp-1' input [1] $.iteration:");
  });
});
