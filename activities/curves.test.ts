import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOOP_EVENTS_FILE } from '../src/runtime/tensorboard.js';
import { createCurveActivities } from './curves.js';

describe('writeLoopCurves', () => {
  const { writeLoopCurves } = createCurveActivities();
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gymflow-curves-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends to the experiment’s loop run under the configured directory', async () => {
    const { file } = await writeLoopCurves({ dir, experiment: 'demo', iteration: 0, scalars: { 'eval/success': 0.5 } });
    expect(file).toBe(path.join(dir, 'demo', 'loop', LOOP_EVENTS_FILE));
    const size = (await stat(file)).size;
    await writeLoopCurves({ dir, experiment: 'demo', iteration: 1, scalars: { 'eval/success': 0.75 } });
    expect((await stat(file)).size).toBeGreaterThan(size);
  });

  it('fails for good, without a retry, when the directory cannot be made', async () => {
    const blocked = path.join(dir, 'blocked');
    await writeFile(blocked, 'a file');
    const err: unknown = await writeLoopCurves({ dir: blocked, experiment: 'demo', iteration: 0, scalars: { a: 1 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'CURVES_UNWRITABLE', nonRetryable: true, message: expect.stringMatching(/^TensorBoard curves: ENOTDIR/) as string });
  });

  it('refuses input that is not an iteration’s curves, naming the field', async () => {
    await expect(writeLoopCurves({ dir, experiment: 'demo', iteration: -1, scalars: {} })).rejects.toThrow(/writeLoopCurves.*iteration/s);
    await expect(writeLoopCurves({ dir: '', experiment: 'demo', iteration: 0, scalars: {} })).rejects.toThrow(/writeLoopCurves.*dir/s);
  });
});
