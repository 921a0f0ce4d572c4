/**
 * The binned RMS calibration error of stated confidences (Hendrycks et al.'s `calib_err(p='2')`, the number
 * Humanity's Last Exam reports beside accuracy): sort the answers by their stated confidence, cut them into bins
 * of β consecutive answers (the last bin takes the remainder), and take
 *
 *   RMS-CE = √( Σ_b (n_b / n) · (mean confidence_b − accuracy_b)² ).
 *
 * 0 is perfect calibration (in every bin the stated confidence equals the share answered correctly); a model
 * that says 90% and is right 10% of the time scores 0.8. Bins of equal *count* (not equal width) keep every bin's
 * accuracy estimated from β answers; HLE uses β = 100.
 *
 * Two departures of HLE's script (`hle_eval/run_judge_results.py`, copied from `outlier-exposure`) are options
 * here, off by default: its loop `for i in range(len(bins) - 1)` leaves the last bin out of the sum (while still
 * dividing by the total n), which `dropLastBin: true` reproduces for numbers comparable with its leaderboard; and
 * with fewer than β answers it has no bin at all (it fails), where this function uses one bin of all the answers.
 * Ties in confidence are ordered by their position in the input (a stable sort; numpy's `argsort` is not stable,
 * so a tie that straddles a bin boundary may be split differently).
 */

/** One answer: the confidence the answerer stated, in [0, 1], and whether it was right. */
export interface StatedConfidence {
  confidence: number;
  correct: boolean;
}

/** Options of {@link rmsCalibrationError}. */
export interface CalibrationErrorOptions {
  /** Answers per bin, β (the last bin takes the remainder). Default 100, HLE's. */
  binSize?: number;
  /** Leave the last bin out of the sum, as HLE's script does (see the module comment). Default false. */
  dropLastBin?: boolean;
}

/** One bin of {@link CalibrationError}. */
export interface CalibrationBin {
  /** Answers in the bin. */
  n: number;
  /** Mean stated confidence of the bin's answers. */
  confidence: number;
  /** Share of the bin's answers that were right. */
  accuracy: number;
}

/** The calibration error with the bins it was computed from. */
export interface CalibrationError {
  /** The RMS calibration error, in [0, 1]. */
  rms: number;
  /** Answers. */
  n: number;
  /** β. */
  binSize: number;
  /** The bins, lowest confidence first (all of them, the dropped one included with `dropLastBin`). */
  bins: CalibrationBin[];
}

/**
 * The binned RMS calibration error of `answers` (see the module comment).
 *
 * @example
 * ```ts
 * rmsCalibrationError([{ confidence: 0.9, correct: false }, { confidence: 0.9, correct: true }]).rms; // 0.4
 * ```
 * @throws RangeError for no answers, a confidence outside [0, 1] or not a number, or a bin size that is not a
 * positive integer.
 */
export function rmsCalibrationError(answers: readonly StatedConfidence[], options: CalibrationErrorOptions = {}): CalibrationError {
  const binSize = options.binSize ?? 100;
  if (!Number.isInteger(binSize) || binSize <= 0) throw new RangeError(`rmsCalibrationError: binSize must be a positive integer, got ${binSize}`);
  const n = answers.length;
  if (n === 0) throw new RangeError('rmsCalibrationError: no answers');
  answers.forEach((a, i) => {
    if (typeof a.confidence !== 'number' || !(a.confidence >= 0 && a.confidence <= 1)) {
      throw new RangeError(`rmsCalibrationError: answer ${i}: confidence must be a number in [0, 1], got ${String(a.confidence)}`);
    }
  });
  const order = answers.map((a, i) => ({ a, i })).sort((x, y) => x.a.confidence - y.a.confidence || x.i - y.i);
  const count = Math.max(1, Math.floor(n / binSize));
  const bins: CalibrationBin[] = [];
  for (let b = 0; b < count; b++) {
    const slice = order.slice(b * binSize, b === count - 1 ? n : (b + 1) * binSize);
    const confidence = slice.reduce((s, x) => s + x.a.confidence, 0) / slice.length;
    const accuracy = slice.filter((x) => x.a.correct).length / slice.length;
    bins.push({ n: slice.length, confidence, accuracy });
  }
  const summed = options.dropLastBin === true ? bins.slice(0, -1) : bins;
  const squared = summed.reduce((s, bin) => s + (bin.n / n) * (bin.confidence - bin.accuracy) ** 2, 0);
  return { rms: Math.sqrt(squared), n, binSize, bins };
}
