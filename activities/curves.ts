/**
 * The loop's TensorBoard curves (GPU queue, beside the trainer's: the same host resolves the same
 * `tensorboard_dir`): `writeLoopCurves` appends one iteration's numbers to `<dir>/<experiment>/loop`
 * (src/pipeline/tensorboard.ts). Idempotent for TensorBoard: an iteration written again replaces its points.
 */
import path from 'node:path';
import { z } from 'zod';
import { appendScalars, LOOP_EVENTS_FILE, loopCurvesDir } from '../src/pipeline/tensorboard.js';
import { parseInput, withFailureMapping } from './common.js';

/** Curve activities. */
export function createCurveActivities() {
  return {
    /** Writes an iteration's scalars (`loopScalars`) as the loop's curves at step `iteration`; returns the event file. */
    async writeLoopCurves(input: unknown): Promise<{ file: string }> {
      const o = parseInput(
        z.object({ dir: z.string().min(1), experiment: z.string().min(1), iteration: z.number().int().nonnegative(), scalars: z.record(z.string(), z.number()) }),
        input,
        'writeLoopCurves',
      );
      return withFailureMapping(async () => {
        const file = path.join(loopCurvesDir(o.dir, o.experiment), LOOP_EVENTS_FILE);
        await appendScalars(file, o.iteration, o.scalars);
        return { file };
      });
    },
  };
}
