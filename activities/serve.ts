/**
 * Serving the policy (`policy.serve`, docs/pipeline.md "Serving the policy"): for a stage that acts with the
 * policy, the workflow starts `servePolicy` on the GPU queue, waits with `awaitPolicyServer` on the CPU queue
 * until the server lists the checkpoint, runs the stage through `openai:NAME@URL`, then cancels
 * `servePolicy`, which stops the server's process group before the workflow moves on.
 *
 * - `servePolicy` checks the checkpoint out on the GPU host and runs the server (the trainer's own, or
 *   `policy.serve.command` such as vLLM) until it is cancelled, heartbeating every 5 s; a server that exits
 *   by itself fails the activity with its exit status and the end of its stderr.
 * - `awaitPolicyServer` polls `GET /v1/models` until the model name is listed, or fails after
 *   `policy.serve.startup_timeout` naming what it saw last.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import { durationMs } from '../src/core/duration.js';
import { PolicyServeSchema } from '../src/loop/config.js';
import { serveConfigFile, serveLaunch, waitForModel } from '../src/runtime/serve.js';
import { classifyTrainerRun, runTrainer, type TrainerRunResult } from '../src/runtime/trainer-process.js';
import { fileSafe, openWorkspace, type WorkspaceDefaults } from '../src/runtime/workspace.js';
import { parseInput, withFailureMapping } from './common.js';
import { trainerEnv, trainerPython } from './python.js';
import { PolicySchema, ServedPolicySchema } from './schemas.js';
import { failWith, modelDir } from './train.js';


/**
 * Where the output of the server of `model` (the served model name) is appended, attempt after attempt:
 * `<work_dir>/serve/logs/<model>.log`.
 */
export function servedLogFile(workDir: string, model: string): string {
  return path.join(workDir, 'serve', 'logs', `${fileSafe(model)}.log`);
}

/** How often a running server's activity heartbeats (the workers' heartbeat throttle is 5 s too). */
const SERVE_HEARTBEAT_MS = 5_000;

/** The input of `servePolicy` (parsed at run time; typed for the workflows that call it). */
export const ServePolicyInputSchema = z.object({ policy: PolicySchema, served: ServedPolicySchema, serve: PolicyServeSchema, store: z.string().optional(), workDir: z.string().optional() });

/** The input of `awaitPolicyServer` (parsed at run time; typed for the workflows that call it). */
export const AwaitPolicyServerInputSchema = z.object({ served: ServedPolicySchema });

/** Serving activities; `defaults` are the worker's store and work directory. */
export function createServeActivities(defaults: WorkspaceDefaults & { killGraceMs?: number }) {
  return {
    /** Runs the policy's server until the activity is cancelled (see the module comment). */
    async servePolicy(input: z.input<typeof ServePolicyInputSchema>): Promise<{ exitCode: number | null }> {
      const o = parseInput(ServePolicyInputSchema, input, 'servePolicy');
      return withFailureMapping(async () => {
        const ctx = Context.current();
        const ws = await openWorkspace(o, defaults);
        const model = await modelDir(ws, o.policy);
        const runDir = path.join(ws.workDir, 'serve', `${fileSafe(o.served.model)}-${process.pid}-${ctx.info.attempt}`);
        await mkdir(runDir, { recursive: true });
        try {
          const configFile = path.join(runDir, 'serve.json');
          // parent_pid: the trainer's server exits when this worker dies, instead of holding the GPU and the port
          // (as the lifeline also makes it, and a custom command's supervisor makes that command).
          await writeFile(configFile, JSON.stringify(serveConfigFile(o.serve, { model, name: o.served.model }, process.pid)));
          const launch = serveLaunch(o.serve, { model, name: o.served.model, python: trainerPython(), configFile });
          const beat = { model: o.served.model, baseURL: o.served.baseURL, checkpoint: model };
          ctx.heartbeat(beat);
          const idle = setInterval(() => ctx.heartbeat(beat), SERVE_HEARTBEAT_MS);
          let run: TrainerRunResult;
          try {
            // The server's output outlives its run directory: a vLLM that failed to start is diagnosed from it.
            const logFile = servedLogFile(ws.workDir, o.served.model);
            run = await runTrainer({ launch, cwd: runDir, env: trainerEnv(), signal: ctx.cancellationSignal, killGraceMs: defaults.killGraceMs ?? 10_000, logFile });
          } catch (err) {
            throw ApplicationFailure.nonRetryable(`policy.serve.command: ${(err as Error).message}`, 'CONFIG_ERROR');
          } finally {
            clearInterval(idle);
          }
          // Cancelled (the stage is over): the server answered SIGTERM, however it exited.
          if (run.aborted) throw new CancelledFailure(`policy server ${o.served.model} stopped${run.killed ? ' (SIGKILL after the grace period)' : ''}`);
          // A custom command that the supervisor could not start (its `error` event names it), or that refused its
          // arguments (exit 2, as argparse does): the command line is wrong, and no retry will fix it.
          const outcome = classifyTrainerRun(run, `policy server ${o.served.model}`);
          if (o.serve.command !== undefined && outcome.kind === 'config') {
            throw ApplicationFailure.nonRetryable(`policy.serve.command: ${run.error?.message ?? outcome.message}`, 'CONFIG_ERROR');
          }
          // Exited on its own: the failure its exit status calls for; a clean exit (the trainer's server after a
          // SIGTERM from elsewhere, or its parent watchdog) returns, and the workflow fails the stage that still
          // needed it.
          failWith(outcome);
          return { exitCode: run.exitCode };
        } finally {
          await rm(runDir, { recursive: true, force: true });
        }
      });
    },

    /** Waits until the server lists the policy's model name (see the module comment). */
    async awaitPolicyServer(input: z.input<typeof AwaitPolicyServerInputSchema>): Promise<{ waitedMs: number }> {
      const o = parseInput(AwaitPolicyServerInputSchema, input, 'awaitPolicyServer');
      return withFailureMapping(async () => {
        const ctx = Context.current();
        try {
          const waitedMs = await waitForModel(o.served.baseURL, o.served.model, {
            timeoutMs: durationMs(o.served.startupTimeout),
            signal: ctx.cancellationSignal,
            onPoll: (problem) => ctx.heartbeat({ problem }),
          });
          return { waitedMs };
        } catch (err) {
          if (ctx.cancellationSignal.aborted) throw err;
          // The startup timeout has passed: a retry would wait all over again for a server that did not come up.
          throw ApplicationFailure.nonRetryable((err as Error).message, 'SERVER_NOT_READY');
        }
      });
    },
  };
}
