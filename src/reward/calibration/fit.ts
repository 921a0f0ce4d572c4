import { readFile } from 'node:fs/promises';
import { ConfigError, SchemaError } from '../../core/errors.js';
import { defined } from '../../core/defined.js';
import { stripBom, streamJsonl } from '../../core/jsonl-file.js';
import { writeFileAtomically, type WriteOptions } from '../../core/output-file.js';
import { checkTrajectory, type Trajectory } from '../../core/trajectory.js';
import type { BootstrapOptions } from '../stats.js';
import { mean } from '../../core/stats/descriptive.js';
import { pearson } from '../../core/stats/pearson.js';
import { agreementStats, type AgreementStats } from './agreement.js';
import { fitIsotonic, IsotonicCalibration } from './isotonic.js';
import { readHumanLabels, type HumanLabel } from './labels.js';
import { pairLabels, type CalibrationLevel, type UnmatchedLabel } from './pairing.js';

/** Options of {@link fitCalibration}. */
export interface FitCalibrationOptions {
  /** `step` or `trajectory`; inferred from the labels when they are all of one kind. */
  level?: CalibrationLevel;
  /** Bootstrap of the agreement statistics (resamples default 1000, seed 0, level 0.95). */
  bootstrap?: BootstrapOptions;
  /**
   * The annotators' scale, e.g. `[1, 5]`: labels are mapped linearly onto [0, 1] before the fit, so the
   * calibration outputs [0, 1] scores (what `scoreTrajectory` expects of a calibrated total). A label
   * outside the range is an error. Without it the fit maps onto the labels' own scale.
   */
  labelRange?: readonly [number, number];
}

/** What a calibration fit found. */
export interface CalibrationReport {
  level: CalibrationLevel;
  /** Label lines read. */
  labels: number;
  /** (automatic, human) pairs fitted (labels of one step or trajectory averaged into one pair). */
  pairs: number;
  /** Labels of the other level that were left out. */
  ignored: number;
  /** Labels with no automatic score; `unmatchedExamples` lists the first 10. */
  unmatched: number;
  unmatchedExamples: UnmatchedLabel[];
  /** Raw automatic score vs human label. */
  raw: AgreementStats;
  /**
   * Calibrated score vs human label, **in-sample** (fitted and measured on the same pairs, so
   * optimistic): Pearson, mean absolute and root-mean-square error on the human scale.
   */
  calibrated: { pearson: number; mae: number; rmse: number };
  /** Human-scale error of the best constant predictor (the mean label), to put `calibrated` in context. */
  baseline: { mae: number; rmse: number };
}

/** A fitted calibration with its report. */
export interface CalibrationResult {
  calibration: IsotonicCalibration;
  report: CalibrationReport;
}

/**
 * Fits an isotonic calibration from human labels and scored trajectories and measures agreement.
 * Throws {@link ConfigError} when fewer than two labels match a scored step/trajectory.
 *
 * @example
 * ```ts
 * const { calibration, report } = fitCalibration(labels, scored, { bootstrap: { seed: 1 } });
 * console.log(report.raw.spearman); // { estimate, lo, hi, level, resamples, valid }
 * ```
 */
export function fitCalibration(labels: readonly HumanLabel[], trajectories: Iterable<Trajectory>, options: FitCalibrationOptions = {}): CalibrationResult {
  const scaled = options.labelRange ? rescaleLabels(labels, options.labelRange) : labels;
  const paired = pairLabels(scaled, trajectories, defined({ level: options.level }));
  const { pairs } = paired;
  if (pairs.length < 2) {
    const why = paired.unmatched.slice(0, 3).map((u) => `${u.trajectoryId}${u.stepIndex !== undefined ? `#${u.stepIndex}` : ''}: ${u.reason}`);
    const other = paired.level === 'step' ? 'trajectory' : 'step';
    throw new ConfigError(
      `calibration needs at least 2 labelled ${paired.level}s with automatic scores; matched ${pairs.length} of ${labels.length} labels` +
        (why.length > 0 ? ` (e.g. ${why.join('; ')})` : '') +
        (paired.ignored > 0 ? `; ${paired.ignored} ${other}-level label(s) were left out at level ${paired.level} (choose level ${other})` : ''),
    );
  }
  const auto = pairs.map((p) => p.auto);
  const human = pairs.map((p) => p.human);
  const calibration = fitIsotonic(pairs.map((p) => ({ x: p.auto, y: p.human })), {
    level: paired.level,
    n: pairs.length,
    ...(options.labelRange ? { labelRange: [options.labelRange[0], options.labelRange[1]] as [number, number] } : {}),
  });
  const fitted = auto.map((a) => calibration.apply(a));
  const errs = (pred: readonly number[]): { mae: number; rmse: number } => ({
    mae: mean(pred.map((v, i) => Math.abs(v - (human[i] as number)))),
    rmse: Math.sqrt(mean(pred.map((v, i) => (v - (human[i] as number)) ** 2))),
  });
  const humanMean = mean(human);
  return {
    calibration,
    report: {
      level: paired.level,
      labels: labels.length,
      pairs: pairs.length,
      ignored: paired.ignored,
      unmatched: paired.unmatched.length,
      unmatchedExamples: paired.unmatched.slice(0, 10),
      raw: agreementStats(auto, human, options.bootstrap),
      calibrated: { pearson: pearson(fitted, human), ...errs(fitted) },
      baseline: errs(human.map(() => humanMean)),
    },
  };
}

function rescaleLabels(labels: readonly HumanLabel[], [lo, hi]: readonly [number, number]): HumanLabel[] {
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && hi > lo)) throw new ConfigError(`labelRange must be [min, max] with min < max, got [${lo}, ${hi}]`);
  return labels.map((l) => {
    if (l.score < lo || l.score > hi) {
      throw new ConfigError(`label ${l.trajectoryId}${l.stepIndex !== undefined ? ` step ${l.stepIndex}` : ''} has score ${l.score}, outside labelRange [${lo}, ${hi}]`);
    }
    return { ...l, score: (l.score - lo) / (hi - lo) };
  });
}

/** The trajectories of a JSONL file, and the lines left out. */
export interface TrajectoriesRead {
  trajectories: Trajectory[];
  /**
   * Every problem of the lines left out (not JSON, not a trajectory, or an `id` that is not the record's
   * content id), as `file:line $.path: message`.
   */
  errors: string[];
}

/**
 * Reads a JSONL file of (scored) trajectories, streaming. A bad line is left out and reported in `errors`;
 * the rest of the file is read.
 *
 * @throws SchemaError when the file itself cannot be read.
 */
export async function readTrajectoriesFile(path: string): Promise<TrajectoriesRead> {
  const read: TrajectoriesRead = { trajectories: [], errors: [] };
  try {
    for await (const rec of streamJsonl(path, path, checkTrajectory)) {
      if (rec.ok) read.trajectories.push(rec.value);
      else read.errors.push(...rec.errors);
    }
  } catch (err) {
    throw new SchemaError(`${path}: cannot read trajectories: ${(err as Error).message}`);
  }
  return read;
}

/**
 * {@link fitCalibration} from a labels JSONL file and a scored-trajectories JSONL file. Bad lines of the
 * scored file are left out and listed in `errors` ({@link readTrajectoriesFile}); bad label lines are an
 * error ({@link readHumanLabels}).
 *
 * @example
 * ```ts
 * const { calibration, report, errors } = await fitCalibrationFromFiles('labels.jsonl', 'scored.jsonl', { level: 'step' });
 * await saveCalibration('calibration.json', calibration);
 * ```
 */
export async function fitCalibrationFromFiles(
  labelsPath: string,
  scoredPath: string,
  options: FitCalibrationOptions = {},
): Promise<CalibrationResult & { errors: string[] }> {
  const [labels, scored] = await Promise.all([readHumanLabels(labelsPath), readTrajectoriesFile(scoredPath)]);
  return { ...fitCalibration(labels, scored.trajectories, options), errors: scored.errors };
}

/** Writes a calibration's JSON (pretty, trailing newline) atomically (`writeFileAtomically`, with `options`). */
export async function saveCalibration(path: string, calibration: IsotonicCalibration, options: WriteOptions = {}): Promise<void> {
  await writeFileAtomically(path, `${JSON.stringify(calibration.toJSON(), null, 2)}
`, options);
}

/** Reads a calibration JSON file written by {@link saveCalibration}; errors name the file and JSON path. */
export async function loadCalibration(path: string): Promise<IsotonicCalibration> {
  let value: unknown;
  try {
    value = JSON.parse(stripBom(await readFile(path, 'utf8')));
  } catch (err) {
    throw new SchemaError(`${path}: cannot read calibration: ${(err as Error).message}`);
  }
  return IsotonicCalibration.fromJSON(value, path);
}
