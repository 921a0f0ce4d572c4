import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import { tensorboardPoints } from '../../tests/support/tensorboard.js';
import { loopScalars, type IterationMetrics } from '../loop/status.js';
import { appendScalars, crc32c, LOOP_EVENTS_FILE, loopCurvesDir, wholeRecordsLength } from './tensorboard.js';

const python = requires.python(['tensorboard']);

describe('crc32c', () => {
  it('is CRC-32C (Castagnoli)', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });
});

describe('loopCurvesDir', () => {
  it('puts the loop beside the iterations of its experiment', () => {
    expect(loopCurvesDir('/data/tb', 'demo')).toBe(path.join('/data/tb', 'demo', 'loop'));
    expect(loopCurvesDir('tb', 'a/b c')).toBe(path.join(process.cwd(), 'tb', 'a_b_c', 'loop'));
  });
});

describe('loopScalars', () => {
  it('turns what an iteration measured into curves, leaving out what it did not measure', () => {
    const rl: IterationMetrics = {
      iteration: 2,
      phase: 'rl',
      algorithm: 'rl',
      success: { value: 0.75, low: 0.5, high: 0.9, n: 20 },
      evalReward: 0.7,
      evalSteps: 3.5,
      rollouts: { episodes: 8, success: 0.5, meanReward: 0.4, meanSteps: 4 },
      train: { loss: 0.25, steps: 3, entropy: 1.5 },
      wallMs: 90_000,
      refs: {},
    };
    expect(loopScalars(rl)).toEqual({
      'eval/success': 0.75,
      'eval/success_low': 0.5,
      'eval/success_high': 0.9,
      'eval/reward': 0.7,
      'eval/steps': 3.5,
      'rollouts/success': 0.5,
      'rollouts/reward': 0.4,
      'rollouts/steps': 4,
      'rollouts/episodes': 8,
      'train/loss': 0.25,
      'train/steps': 3,
      'train/entropy': 1.5,
      'wall_minutes': 1.5,
    });
    // the baseline: an evaluation only; a trainer that reported no loss (null) has no point either
    expect(loopScalars({ iteration: 0, phase: 'sft', algorithm: 'baseline', wallMs: 6000, refs: {}, train: { loss: null, steps: 0 } })).toEqual({ 'train/steps': 0, 'wall_minutes': 0.1 });
    // an evaluation with trials (eval.repeats 2): pass^1 and pass^2 as curves of their own
    const trials = loopScalars({ ...rl, passK: [{ k: 1, value: 0.75, low: 0.6, high: 0.9 }, { k: 2, value: 0.5, low: 0.3, high: 0.7 }] });
    expect(trials).toMatchObject({ 'eval/pass_hat_1': 0.75, 'eval/pass_hat_2': 0.5 });
    expect(loopScalars({ ...rl, train: { loss: Number.NaN, steps: 3, entropy: Number.POSITIVE_INFINITY } })).not.toHaveProperty('train/loss');
  });

  it("adds the calibration error and each benchmark's curves under eval/<name>/, a failed one with none", () => {
    const m: IterationMetrics = {
      iteration: 1,
      phase: 'main',
      algorithm: 'sft',
      success: { value: 1, low: 0.5, high: 1, n: 2 },
      calibrationError: 0.1,
      benchmarks: {
        hle: { success: { value: 0.6, low: 0.23, high: 0.88, n: 5 }, evalReward: 0.6, evalSteps: 1, calibrationError: 0.2, passK: [{ k: 1, value: 0.6, low: 0.2, high: 1 }], ref: 'sha256:e' },
        down: { error: 'the judge API failed' },
      },
      wallMs: 60_000,
      refs: {},
    };
    expect(loopScalars(m)).toEqual({
      'eval/success': 1,
      'eval/success_low': 0.5,
      'eval/success_high': 1,
      'eval/calibration_error': 0.1,
      'eval/hle/success': 0.6,
      'eval/hle/success_low': 0.23,
      'eval/hle/success_high': 0.88,
      'eval/hle/reward': 0.6,
      'eval/hle/steps': 1,
      'eval/hle/pass_hat_1': 0.6,
      'eval/hle/calibration_error': 0.2,
      'wall_minutes': 1,
    });
  });
});

python.describe('appendScalars', () => {
  let dir = '';
  let file = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gymflow-tensorboard-'));
    file = path.join(dir, 'run', LOOP_EVENTS_FILE);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes event files TensorBoard reads: one point per tag and step', async () => {
    await appendScalars(file, 0, { 'eval/success': 0.125 });
    await appendScalars(file, 1, { 'eval/success': 0.5, 'train/loss': 2.5 });
    await appendScalars(file, 2, { 'eval/success': 0.625, 'train/loss': 1.25 });
    expect(await tensorboardPoints(path.dirname(file))).toEqual({
      'eval/success': [[0, 0.125], [1, 0.5], [2, 0.625]],
      'train/loss': [[1, 2.5], [2, 1.25]],
    });
  });

  it('shows an iteration written again once, with its latest numbers, and drops what came after it', async () => {
    await appendScalars(file, 0, { 'eval/success': 0.125 });
    await appendScalars(file, 1, { 'eval/success': 0.5 });
    await appendScalars(file, 2, { 'eval/success': 0.25 });
    // `gymflow pipeline continue` runs iteration 1 again (its first attempt failed after writing its curves)
    await appendScalars(file, 1, { 'eval/success': 0.75 });
    expect(await tensorboardPoints(path.dirname(file))).toEqual({ 'eval/success': [[0, 0.125], [1, 0.75]] });
  });

  it('cuts a record a killed write left half done before appending, losing nothing written whole', async () => {
    await appendScalars(file, 0, { 'eval/success': 0.125 });
    await appendScalars(file, 1, { 'eval/success': 0.5 });
    const whole = (await stat(file)).size;
    const bytes = await readFile(file);
    expect(wholeRecordsLength(bytes)).toBe(whole);
    // the start of a third append: a length and part of the data
    await appendFile(file, bytes.subarray(bytes.length - 30, bytes.length - 5));
    expect(wholeRecordsLength(await readFile(file))).toBe(whole);
    await appendScalars(file, 2, { 'eval/success': 0.625 });
    expect(await tensorboardPoints(path.dirname(file))).toEqual({ 'eval/success': [[0, 0.125], [1, 0.5], [2, 0.625]] });
  });

  it('refuses a step TensorBoard cannot take, writing nothing', async () => {
    await expect(appendScalars(file, -1, { a: 1 })).rejects.toThrow('step must be a non-negative integer, got -1');
    await expect(appendScalars(file, 1.5, { a: 1 })).rejects.toThrow('got 1.5');
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it('starts a file that is empty (created, never written) with its version record', async () => {
    await appendScalars(file, 0, { a: 1 });
    await writeFile(file, '');
    await appendScalars(file, 3, { a: 2 });
    expect(await tensorboardPoints(path.dirname(file))).toEqual({ a: [[3, 2]] });
  });
});
