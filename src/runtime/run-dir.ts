import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { atomicWrite, isErrno } from '../core/fs.js';
import { formatZodIssues } from '../core/trajectory.js';
import { REF_PATTERN } from '../hub/store/layout.js';
import type { ArtifactStore } from '../hub/store/store.js';
import { tensorboardDirIn } from '../loop/plan.js';
import { experimentCurvesDir } from './tensorboard.js';

/**
 * What a `train` attempt leaves in its run directory (`<work_dir>/runs/<workflow>/<run>/iter-<n>-<command>`)
 * once its checkpoint is in the store.
 *
 * While it trains, the directory's `output/` holds the trainer's step checkpoints (`keep_last` of them, each
 * with the optimizer state: about four times the model for Adam) and its final model. They exist so that a
 * retried attempt resumes instead of starting over; once the final model is stored they are dead weight, and
 * on a run of many iterations they would fill the GPU host's disk. So the attempt that stored the checkpoint
 * records what it returns in `stored.json` and then deletes `output/`.
 *
 * The record makes that safe: when the worker dies after storing but before Temporal hears of the result, the
 * activity is retried, finds the record (and the checkpoint in the store) and returns the same result without
 * training again. The trainer's configuration file stays beside it for a post-mortem.
 */

/** The record's file name in the run directory. */
export const STORED_RESULT_FILE = 'stored.json';
/** The trainer's output (stdout and stderr) of every attempt, appended; kept when `output/` is released. */
export const TRAINER_LOG = 'trainer.log';

/** What a finished `train` attempt returned: the activity's result. */
export const StoredTrainResultSchema = z
  .object({
    checkpointRef: z.string().regex(REF_PATTERN),
    loss: z.number().nullable(),
    /** The policy's entropy at the last step (RL); absent in records written before it was reported. */
    entropy: z.number().nullable().optional(),
    /** The rollout engine's gap to the trainer at the last step (RL on step samples); absent likewise. */
    mismatchKl: z.number().nullable().optional(),
    /** The samples the trainer cut at `max_length` (RL); absent likewise. */
    cutSamples: z.number().int().nonnegative().nullable().optional(),
    steps: z.number().int().nonnegative(),
    wallMs: z.number().nonnegative(),
    /** The checkpoint a retried attempt resumed from. */
    resumedFrom: z.string().nullable(),
    /** The attempt that trained (and stored) it. */
    attempt: z.number().int().positive(),
  })
  .strict();
/** One {@link StoredTrainResultSchema} record. */
export type StoredTrainResult = z.infer<typeof StoredTrainResultSchema>;

/**
 * Records `result` in `runDir` (written, synced and renamed into place, so a reader sees all of it or none)
 * and then deletes `outputDir`, the trainer's checkpoints.
 */
export async function releaseRunDir(runDir: string, outputDir: string, result: StoredTrainResult): Promise<void> {
  // The temp file beside the record, not the store's: the store's temp files live under the store root,
  // often another filesystem (a shared mount) than this local work directory, where a rename cannot reach.
  // atomicWrite fsyncs the directory: the record must be durable before the checkpoints it replaces are gone.
  await atomicWrite(path.join(runDir, STORED_RESULT_FILE), `${JSON.stringify(result, null, 2)}\n`);
  await rm(outputDir, { recursive: true, force: true });
}

/**
 * The result recorded in `runDir` by an earlier attempt, when there is one and its checkpoint is still in
 * `store`. `problem` says why a record that exists cannot be used (unreadable, not a record, its checkpoint
 * gone from the store): the caller trains again and should say so.
 */
export async function storedTrainResult(runDir: string, store: Pick<ArtifactStore, 'has'>): Promise<{ result?: StoredTrainResult; problem?: string }> {
  const file = path.join(runDir, STORED_RESULT_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return {};
    return { problem: `${file}: cannot read the stored result (${(err as Error).message})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `${file}: not JSON (${(err as Error).message})` };
  }
  const parsed = StoredTrainResultSchema.safeParse(value);
  if (!parsed.success) {
    return { problem: `${file}: not a stored train result (${formatZodIssues(parsed.error, '').map((l) => l.trim()).join('; ')})` };
  }
  if (!(await store.has(parsed.data.checkpointRef))) {
    return { problem: `${file}: its checkpoint ${parsed.data.checkpointRef} is no longer in the store` };
  }
  return { result: parsed.data };
}

/**
 * Where an iteration's training writes its TensorBoard curves: `<tensorboard_dir>/<experiment>/iter-<n>-<command>`,
 * the trainer configuration's `tensorboard_dir` resolved against the worker's working directory. So one
 * `tensorboard --logdir <tensorboard_dir>` shows every iteration of every experiment as a run of its own, and a
 * retried attempt writes into its iteration's directory again (the trainer hides what the attempt before it
 * logged past the checkpoint it resumes from). `undefined` when the configuration sets no directory.
 */
export function tensorboardRunDir(trainConfig: Readonly<Record<string, unknown>>, experiment: string, iteration: number, command: string): string | undefined {
  const dir = tensorboardDirIn(trainConfig);
  return dir === undefined ? undefined : path.join(experimentCurvesDir(dir, experiment), `iter-${iteration}-${command}`);
}

/**
 * The directories whose runs a pipeline configuration's training writes (each phase's
 * `train.config.tensorboard_dir`, resolved as {@link tensorboardRunDir} does), each once: what to give
 * `tensorboard --logdir`.
 */
export function tensorboardDirs(config: { readonly phases: readonly { readonly train: { readonly config: Readonly<Record<string, unknown>> } }[] }): string[] {
  const dirs = new Set<string>();
  for (const phase of config.phases) {
    const dir = tensorboardDirIn(phase.train.config);
    if (dir !== undefined) dirs.add(path.resolve(dir));
  }
  return [...dirs];
}
