/**
 * `train`'s retry after its checkpoint was stored (the worker died before the result reached the server): run
 * as a real activity (the SDK's MockActivityEnvironment supplies the context) on a real store. The trainer
 * never starts in these cases, so no Python is needed.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { putTree } from '../src/hub/store/tree.js';
import { releaseRunDir, type StoredTrainResult } from '../src/runtime/run-dir.js';
import { openWorkspace } from '../src/runtime/workspace.js';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { initialHeartbeat, type TrainerOutcome } from '../src/runtime/trainer-process.js';
import { NON_RETRYABLE_TYPES } from '../src/loop/failures.js';
import { createTrainActivities, failWith, type TrainInputSchema } from './train.js';

describe('train, retried after it stored its checkpoint', () => {
  let root: string;
  let runDir: string;
  let stored: StoredTrainResult;
  const missing = `sha256:${'b'.repeat(64)}`;
  const input = (): z.input<typeof TrainInputSchema> => ({
    experiment: 'x',
    iteration: 1,
    command: 'sft',
    config: {},
    // Neither is in the store: an attempt that really trained would fail on them at once.
    datasetRef: missing,
    policy: { checkpointRef: missing, iteration: 0 },
    launcher: 'auto',
    store: path.join(root, 'store'),
    workDir: path.join(root, 'work'),
  });
  const retry = () => new MockActivityEnvironment({ attempt: 2, workflowExecution: { workflowId: 'loop/1', runId: 'run-1' } });

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'gymflow-train-retry-'));
    const ws = await openWorkspace({ store: path.join(root, 'store'), workDir: path.join(root, 'work') });
    // The run directory of that workflow run's iteration 1 (the workflow id's `/` made safe).
    runDir = path.join(ws.workDir, 'runs', 'loop_1', 'run-1', 'iter-1-sft');
    const model = path.join(root, 'final');
    await mkdir(model, { recursive: true });
    await writeFile(path.join(model, 'model.safetensors'), 'weights');
    const entry = await putTree(ws.store, model, { kind: 'checkpoint', name: 'x/iter-1/checkpoint' });
    stored = { checkpointRef: entry.ref, loss: 0.5, steps: 12, wallMs: 900, resumedFrom: null, attempt: 1 };
    await mkdir(path.join(runDir, 'output', 'checkpoint-12'), { recursive: true });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('returns the recorded result without training again', async () => {
    await releaseRunDir(runDir, path.join(runDir, 'output'), stored);
    const activities = createTrainActivities({});
    await expect(retry().run(activities.train, input())).resolves.toEqual(stored);
  });

  it('is not started again after three attempts in a row that ended without a newer checkpoint', async () => {
    const activities = createTrainActivities({});
    // Attempt 4: attempts 1-3 resumed from checkpoint-12 (on disk) and none got further.
    const details = { ...initialHeartbeat(3), resumedStep: 12, attemptsWithoutProgress: 2 };
    const fourth = new MockActivityEnvironment({ attempt: 4, heartbeatDetails: details, workflowExecution: { workflowId: 'loop/1', runId: 'run-1' } });
    await writeFile(path.join(runDir, 'output', 'checkpoint-12', 'trainer_state.pt'), 'state');
    const err = await fourth.run(activities.train, input()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'TRAINER_FAILED', nonRetryable: true });
    expect((err as Error).message).toMatch(/trainer sft \(iteration 1, attempt 4\) not started: the 3 attempts before it ended without a newer checkpoint/);
    // Had attempt 3 got further (checkpoint-14 on disk), attempt 4 would train: here it fails on the missing policy.
    await mkdir(path.join(runDir, 'output', 'checkpoint-14'), { recursive: true });
    await writeFile(path.join(runDir, 'output', 'checkpoint-14', 'trainer_state.pt'), 'state');
    const again = new MockActivityEnvironment({ attempt: 4, heartbeatDetails: details, workflowExecution: { workflowId: 'loop/1', runId: 'run-1' } });
    await expect(again.run(activities.train, input())).rejects.toThrow(missing);
  });

  it('trains again when the recorded checkpoint is gone from the store', async () => {
    await releaseRunDir(runDir, path.join(runDir, 'output'), { ...stored, checkpointRef: missing });
    const activities = createTrainActivities({});
    // Training again needs the policy's checkpoint, which this store does not have either.
    await expect(retry().run(activities.train, input())).rejects.toThrow(missing);
  });
});

describe('failWith', () => {
  const cases: [TrainerOutcome['kind'], string | undefined, boolean][] = [
    ['config', 'CONFIG_ERROR', true],
    ['data', 'DATA_ERROR', true],
    ['checkpoint', 'CHECKPOINT_ERROR', true],
    ['diverged', 'TRAINING_DIVERGED', true],
    ['out_of_memory', 'TRAINER_OUT_OF_MEMORY', true],
    ['stalled', 'TRAINER_STALLED', false],
    ['failed', 'TRAINER_FAILED', false],
  ];
  it.each(cases)('fails a %s trainer run as %s (non-retryable: %s)', (kind, type, nonRetryable) => {
    let thrown: unknown;
    try {
      failWith({ kind, message: `trainer sft failed: ${kind}` } as TrainerOutcome);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect(thrown).toMatchObject({ type, nonRetryable, message: `trainer sft failed: ${kind}` });
    // The retry policies list the same types (workflows/activity-options.ts), so no retry starts even if the flag were lost.
    expect(NON_RETRYABLE_TYPES.includes(type ?? '')).toBe(nonRetryable);
  });

  it('passes a finished run and reports a cancelled one as cancelled', () => {
    expect(() => failWith({ kind: 'ok' })).not.toThrow();
    expect(() => failWith({ kind: 'cancelled', message: 'trainer stopped' })).toThrow(CancelledFailure);
  });
});
