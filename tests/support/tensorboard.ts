/**
 * Reads TensorBoard event files back with TensorBoard's own reader (`.venv`'s `tensorboard` package), for tests of
 * what gymflow writes (the loop's curves, src/runtime/tensorboard.ts; the trainer's, through the pipeline). Tests
 * that use it require `requires.python(['tensorboard'])`.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../../src/core/package-root.js';

/** Every scalar TensorBoard's own reader shows for `dir`: {tag: [[step, value], …]} (purged points hidden). */
export async function tensorboardPoints(dir: string): Promise<Record<string, [number, number][]>> {
  const script = [
    'import json, sys',
    'from tensorboard.backend.event_processing.event_accumulator import EventAccumulator',
    'a = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0}); a.Reload()',
    'print(json.dumps({t: [[e.step, e.value] for e in a.Scalars(t)] for t in a.Tags()["scalars"]}))',
  ].join('\n');
  const { stdout } = await promisify(execFile)(path.join(PACKAGE_ROOT, '.venv', 'bin', 'python'), ['-c', script, dir]);
  return JSON.parse(stdout) as Record<string, [number, number][]>;
}
