/**
 * GPU activities (task queue `gymflow-gpu`): training and the ONNX export of the trained policy.
 *
 * `train` spawns `python -m gymflow_trainer sft|rl|dpo --config FILE` (through `accelerate launch` /
 * `torchrun` for several GPUs), turns its JSON events into heartbeats whose details carry the latest
 * checkpoint, resumes when Temporal retries it from the newer of that checkpoint (`activityInfo().heartbeatDetails`)
 * and the newest complete one in the attempt's output directory,
 * and kills the trainer's process group when the activity is cancelled or times out. The final model is
 * stored as a `checkpoint` tree; the activity returns its ref, after deleting the attempt's step checkpoints
 * and leaving a record of its result that a retry returns (src/runtime/run-dir.ts).
 *
 * `exportPolicy` runs `python -m gymflow_trainer export-onnx` on a checkpoint and stores the policy
 * directory (`model.onnx`, tokenizer, `gymflow_policy.json`) as a `policy` tree, acted with as `local:<dir>`.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import { putTree } from '../src/hub/store/tree.js';
import { releaseRunDir, storedTrainResult, tensorboardRunDir, TRAINER_LOG, type StoredTrainResult } from '../src/runtime/run-dir.js';
import { trainNumbers, type PolicyState } from '../src/loop/status.js';
import { FAILURE_TYPES, type FailureType } from '../src/loop/failures.js';
import {
  attemptsWithoutProgress,
  buildTrainerLaunch,
  checkpointStepOf,
  classifyTrainerRun,
  initialHeartbeat,
  madeProgress,
  nextHeartbeat,
  resumeFrom,
  TRAIN_ATTEMPTS_WITHOUT_PROGRESS,
  runTrainer,
  trainerProcessCount,
  visibleGpuCount,
  type TrainerFailureKind,
  type TrainerOutcome,
  type TrainerRunResult,
  type TrainHeartbeat,
} from '../src/runtime/trainer-process.js';
import { checkoutCached, fileSafe, openWorkspace, type Workspace, type WorkspaceDefaults } from '../src/runtime/workspace.js';
import { parseInput, progressReporter, withFailureMapping } from './common.js';
import { PolicySchema, storeRef as ref } from './schemas.js';
import { probeModules, trainerEnv, trainerPython } from './python.js';
import { defined } from '../src/core/defined.js';

/** Heartbeats while the trainer is quiet (a long step), so a lost worker is noticed but a slow step is not. */
const IDLE_HEARTBEAT_MS = 10_000;

/**
 * The quiet-trainer heartbeat interval under a heartbeat timeout (`train.heartbeat_timeout`): every 10 s,
 * or a quarter of the timeout when that is shorter, so a short timeout (tests use 10 s) never expires
 * during one long step.
 */
function idleHeartbeatMs(heartbeatTimeoutMs: number | undefined): number {
  return heartbeatTimeoutMs === undefined || heartbeatTimeoutMs <= 0 ? IDLE_HEARTBEAT_MS : Math.min(IDLE_HEARTBEAT_MS, Math.max(1000, Math.floor(heartbeatTimeoutMs / 4)));
}

/** What `train` returns (and records in its run directory). */
export type TrainResult = StoredTrainResult;

/** The model directory of a policy on this worker. */
export async function modelDir(ws: Workspace, policy: PolicyState): Promise<string> {
  if (policy.checkpointRef !== undefined) return checkoutCached(ws, policy.checkpointRef);
  if (policy.checkpointPath !== undefined) return policy.checkpointPath;
  throw ApplicationFailure.nonRetryable('the policy has neither a checkpoint ref nor a model path', 'CONFIG_ERROR');
}

let accelerateProbe: Promise<boolean> | undefined;
/** Whether `accelerate` is importable by the trainer's Python (asked once per worker). */
function hasAccelerate(): Promise<boolean> {
  accelerateProbe ??= probeModules(['accelerate']).then((m) => typeof m['accelerate'] === 'string');
  return accelerateProbe;
}

/** Throws the failure a finished trainer run calls for, or returns when it succeeded. */
export function failOn(run: TrainerRunResult, label: string): void {
  failWith(classifyTrainerRun(run, label));
}

/**
 * The Temporal failure type of each way a trainer run fails; whether a retry may help (and why) is the
 * type's entry in `src/loop/failures.ts`.
 */
const FAILURES: Readonly<Record<TrainerFailureKind, FailureType>> = {
  config: 'CONFIG_ERROR',
  data: 'DATA_ERROR',
  checkpoint: 'CHECKPOINT_ERROR',
  diverged: 'TRAINING_DIVERGED',
  out_of_memory: 'TRAINER_OUT_OF_MEMORY',
  stalled: 'TRAINER_STALLED',
  failed: 'TRAINER_FAILED',
};

/** {@link failOn} for an outcome already classified. */
export function failWith(outcome: TrainerOutcome): void {
  if (outcome.kind === 'ok') return;
  if (outcome.kind === 'cancelled') throw new CancelledFailure(outcome.message);
  const type = FAILURES[outcome.kind];
  throw FAILURE_TYPES[type].retryable ? ApplicationFailure.retryable(outcome.message, type) : ApplicationFailure.nonRetryable(outcome.message, type);
}

/** The input of `train` (parsed at run time; typed for the workflows that call it). */
export const TrainInputSchema = z.object({
  experiment: z.string(),
  iteration: z.number().int().positive(),
  command: z.enum(['sft', 'rl', 'dpo']),
  config: z.record(z.string(), z.unknown()),
  datasetRef: ref,
  policy: PolicySchema,
  processes: z.number().int().positive().optional(),
  launcher: z.enum(['auto', 'accelerate', 'torchrun']),
  store: z.string().optional(),
  workDir: z.string().optional(),
});

/** The input of `exportPolicy` (parsed at run time; typed for the workflows that call it). */
export const ExportPolicyInputSchema = z.object({ experiment: z.string(), policy: PolicySchema, store: z.string().optional(), workDir: z.string().optional() });

/** GPU activities; `defaults` are the worker's store and work directory. */
export function createTrainActivities(defaults: WorkspaceDefaults & { killGraceMs?: number }) {
  return {
    /** Trains one iteration (see the module comment). */
    async train(input: z.input<typeof TrainInputSchema>): Promise<TrainResult> {
      const o = parseInput(TrainInputSchema, input, 'train');
      return withFailureMapping(async () => {
        const ctx = Context.current();
        const info = ctx.info;
        const ws = await openWorkspace(o, defaults);
        const started = Date.now();
        // One directory per workflow run and iteration: a retry finds the checkpoints of the attempt before.
        const { workflowId, runId } = info.workflowExecution ?? { workflowId: 'standalone', runId: info.activityId };
        const runDir = path.join(ws.workDir, 'runs', fileSafe(workflowId), runId, `iter-${o.iteration}-${o.command}`);
        const outputDir = path.join(runDir, 'output');
        // An earlier attempt stored the checkpoint but its result never reached the server (the worker died
        // after `putTree`): return what it recorded rather than train again (run-dir.ts).
        const stored = await storedTrainResult(runDir, ws.store);
        if (stored.result !== undefined) return stored.result;
        if (stored.problem !== undefined) ctx.log.warn(`training again: ${stored.problem}`);
        // A retry resumes from the newer of the last heartbeat's checkpoint and the newest one in outputDir (the
        // server's heartbeat is throttled, so rotation may have deleted the checkpoint it names).
        const resume = info.attempt > 1 ? resumeFrom(info.heartbeatDetails, outputDir) : undefined;
        // Retries go on while attempts get further; after TRAIN_ATTEMPTS_WITHOUT_PROGRESS in a row that did not, not.
        const resumedStep = checkpointStepOf(resume);
        const stalled = info.attempt > 1 ? attemptsWithoutProgress(info.heartbeatDetails, resumedStep) : 0;
        const label = `trainer ${o.command} (iteration ${o.iteration}, attempt ${info.attempt})`;
        if (stalled >= TRAIN_ATTEMPTS_WITHOUT_PROGRESS) {
          throw ApplicationFailure.nonRetryable(
            `${label} not started: the ${stalled} attempts before it ended without a newer checkpoint than they started from (their failures are in the workflow's history)`,
            'TRAINER_FAILED',
          );
        }
        // Recorded at once, so an attempt that fails before its trainer starts counts too.
        let beat: TrainHeartbeat = { ...initialHeartbeat(info.attempt), ...defined({ checkpoint: resume }), resumedStep, attemptsWithoutProgress: stalled };
        ctx.heartbeat(beat);
        await mkdir(runDir, { recursive: true });
        const model = { ...((o.config['model'] as Record<string, unknown> | undefined) ?? {}), path: await modelDir(ws, o.policy) };
        const configFile = path.join(runDir, `${o.command}.json`);
        const tensorboard = tensorboardRunDir(o.config, o.experiment, o.iteration, o.command);
        const trainerConfig = { ...o.config, model, data: await ws.store.localObjectFile(o.datasetRef), output_dir: outputDir, ...defined({ tensorboard_dir: tensorboard }) };
        await writeFile(configFile, JSON.stringify(trainerConfig, null, 2));

        const processes = trainerProcessCount(o.processes, visibleGpuCount());
        const launch = buildTrainerLaunch({
          python: trainerPython(),
          trainerCommand: o.command,
          configFile,
          resumeFrom: resume,
          processes,
          launcher: o.launcher,
          hasAccelerate: processes > 1 && o.launcher === 'auto' ? await hasAccelerate() : false,
        });

        // Where training really continued from: the trainer's `start` event says, when it had to skip an
        // unreadable checkpoint.
        let resumedFrom = resume ?? null;
        // With `optim.carry_state`: the model whose optimizer state the trainer continued (null: zero moments).
        let optimizerFrom: string | null | undefined;
        const report = progressReporter('train', 'steps');
        const idle = setInterval(() => ctx.heartbeat(beat), idleHeartbeatMs(info.heartbeatTimeoutMs));
        let run: TrainerRunResult;
        try {
          run = await runTrainer({
            launch,
            cwd: runDir,
            env: trainerEnv(),
            signal: ctx.cancellationSignal,
            killGraceMs: defaults.killGraceMs ?? 10_000,
            // Every attempt's output, kept with the run directory (its stall dumps and tracebacks included).
            logFile: path.join(runDir, TRAINER_LOG),
            onEvent: (event) => {
              beat = nextHeartbeat(beat, event);
              if (event.event === 'start') {
                if (event.resumed_from !== undefined) resumedFrom = event.resumed_from;
                if (event.optimizer_from !== undefined) {
                  optimizerFrom = event.optimizer_from === null ? null : (o.policy.checkpointRef ?? o.policy.checkpointPath ?? null);
                }
                for (const u of event.unreadable_checkpoints ?? []) {
                  ctx.log.warn(`training did not resume from ${u.path}, which cannot be read back (${u.error}); it is set aside as ${u.path}.unreadable`);
                }
              }
              const note = `attempt ${info.attempt}${resumedFrom === null ? '' : `, resumed from ${resumedFrom}`}${trainNumbers(beat)}`;
              report(beat.step, beat.totalSteps ?? beat.step, beat, note);
            },
          });
        } finally {
          clearInterval(idle);
        }
        try {
          failOn(run, label);
        } catch (err) {
          if (!(err instanceof ApplicationFailure) || err.nonRetryable || madeProgress(beat) || stalled + 1 < TRAIN_ATTEMPTS_WITHOUT_PROGRESS) throw err;
          throw ApplicationFailure.nonRetryable(`${err.message}; not retried: ${stalled + 1} attempts in a row ended without a newer checkpoint than they started from`, err.type);
        }
        const finalDir = run.done?.path ?? path.join(outputDir, 'final');
        const parents = [o.datasetRef, ...(o.policy.checkpointRef === undefined ? [] : [o.policy.checkpointRef])];
        // what the trainer last reported: the checkpoint's metadata and the activity's result both carry it
        const { loss, entropy, mismatchKl, cutSamples } = beat;
        const numbers = { steps: beat.step, loss, entropy, mismatchKl, cutSamples };
        const entry = await putTree(ws.store, finalDir, {
          kind: 'checkpoint',
          parents,
          name: `${o.experiment}/iter-${o.iteration}/checkpoint`,
          meta: {
            command: o.command,
            iteration: o.iteration,
            ...numbers,
            // the trainer's whole schedule, which it builds from the dataset: `steps` falls short of it only if cut
            totalSteps: beat.totalSteps,
            resumedFrom,
            ...defined({ optimizerFrom }),
          },
        });
        const wallMs = Date.now() - started;
        const result: TrainResult = { checkpointRef: entry.ref, ...numbers, wallMs, resumedFrom, attempt: info.attempt };
        // The step checkpoints (optimizer state included) are no longer needed once the model is stored.
        await releaseRunDir(runDir, outputDir, result);
        return result;
      });
    },

    /** Exports a checkpoint to an ONNX policy directory and stores it (see the module comment). */
    async exportPolicy(input: z.input<typeof ExportPolicyInputSchema>): Promise<{ onnxRef: string }> {
      const o = parseInput(ExportPolicyInputSchema, input, 'exportPolicy');
      return withFailureMapping(async () => {
        const ctx = Context.current();
        const ws = await openWorkspace(o, defaults);
        const checkpoint = await modelDir(ws, o.policy);
        const runDir = path.join(ws.workDir, 'onnx', `${process.pid}-${Date.now()}-${ctx.info.attempt}`);
        const outputDir = path.join(runDir, 'policy');
        await mkdir(runDir, { recursive: true });
        try {
          const configFile = path.join(runDir, 'export-onnx.json');
          await writeFile(configFile, JSON.stringify({ kind: 'policy', checkpoint, output_dir: outputDir }));
          const launch = buildTrainerLaunch({ python: trainerPython(), trainerCommand: 'export-onnx', configFile, processes: 1, launcher: 'auto' });
          const idle = setInterval(() => ctx.heartbeat({ phase: 'export-onnx' }), IDLE_HEARTBEAT_MS);
          let run: TrainerRunResult;
          try {
            run = await runTrainer({ launch, cwd: runDir, env: trainerEnv(), signal: ctx.cancellationSignal, onEvent: (e) => ctx.heartbeat({ phase: e.event }) });
          } finally {
            clearInterval(idle);
          }
          failOn(run, `export-onnx of iteration ${o.policy.iteration}`);
          const parents = o.policy.checkpointRef === undefined ? [] : [o.policy.checkpointRef];
          const entry = await putTree(ws.store, outputDir, {
            kind: 'policy',
            parents,
            name: `${o.experiment}/iter-${o.policy.iteration}/policy`,
            meta: { format: 'gymflow-onnx-policy', iteration: o.policy.iteration },
          });
          return { onnxRef: entry.ref };
        } finally {
          await rm(runDir, { recursive: true, force: true });
        }
      });
    },
  };
}
