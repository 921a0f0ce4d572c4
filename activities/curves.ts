/**
 * The loop's TensorBoard curves (GPU queue, beside the trainer's: the same host resolves the same
 * `tensorboard_dir`): `writeLoopCurves` appends one iteration's numbers to `<dir>/<experiment>/loop`
 * (src/runtime/tensorboard.ts). Idempotent for TensorBoard: an iteration written again replaces its points.
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { appendScalars, LOOP_EVENTS_FILE, loopCurvesDir } from '../src/runtime/tensorboard.js';
import { parseInput, withFailureMapping } from './common.js';

/** Errors no retry can fix: something in the way of the directory, or no permission to write there. */
const UNWRITABLE = new Set(['ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'EROFS', 'ENAMETOOLONG']);

/** The input of `writeLoopCurves` (parsed at run time; typed for the workflows that call it). */
export const WriteLoopCurvesInputSchema = z.object({ dir: z.string().min(1), experiment: z.string().min(1), iteration: z.number().int().nonnegative(), scalars: z.record(z.string(), z.number()) });

/** Curve activities. */
export function createCurveActivities() {
  return {
    /** Writes an iteration's scalars (`loopScalars`) as the loop's curves at step `iteration`; returns the event file. */
    async writeLoopCurves(input: z.input<typeof WriteLoopCurvesInputSchema>): Promise<{ file: string }> {
      const o = parseInput(WriteLoopCurvesInputSchema, input, 'writeLoopCurves');
      return withFailureMapping(async () => {
        const file = path.join(loopCurvesDir(o.dir, o.experiment), LOOP_EVENTS_FILE);
        try {
          await appendScalars(file, o.iteration, o.scalars);
        } catch (err) {
          // A path that cannot be a directory or may not be written stays so: no retry (a full disk may clear).
          const code = (err as NodeJS.ErrnoException).code;
          if (code !== undefined && UNWRITABLE.has(code)) {
            throw ApplicationFailure.create({ message: `TensorBoard curves: ${(err as Error).message}`, type: 'CURVES_UNWRITABLE', nonRetryable: true, cause: err as Error });
          }
          throw err;
        }
        return { file };
      });
    },
  };
}
