import { ConfigError } from '../../core/errors.js';
import type { Trajectory } from '../../core/trajectory.js';
import type { HumanLabel } from './labels.js';
import { defined } from '../../core/defined.js';

/**
 * Pairs human labels with the automatic scores of scored trajectories.
 *
 * - A step label (`stepIndex` set) pairs with that step's `reward.score`.
 * - A trajectory label pairs with the trajectory's `reward.total`.
 * - Several labels of the same step (or trajectory) — several annotators — are averaged into one pair,
 *   so a twice-labelled step does not weigh double in the fit or the statistics.
 * - If the scored file holds the same trajectory id more than once, the last one wins (a re-score).
 */

/** The granularity labels and scores are compared at. */
export type CalibrationLevel = 'step' | 'trajectory';

/** One (automatic, human) pair. */
export interface CalibrationPair {
  trajectoryId: string;
  stepIndex?: number;
  auto: number;
  /** Mean of the human labels of this step or trajectory. */
  human: number;
  /** How many labels were averaged. */
  labels: number;
}

/** A label that found no automatic score, and why. */
export interface UnmatchedLabel {
  trajectoryId: string;
  stepIndex?: number;
  reason: 'unknown trajectory' | 'no such step' | 'step not scored' | 'trajectory not scored';
}

/** Result of {@link pairLabels}. */
export interface PairedLabels {
  level: CalibrationLevel;
  pairs: CalibrationPair[];
  unmatched: UnmatchedLabel[];
  /** Labels of the other level, left out because `level` was chosen. */
  ignored: number;
}

/**
 * Pairs labels with automatic scores. Without `level`, it is inferred: all labels with `stepIndex` →
 * `step`, none → `trajectory`; a mix is an error asking for `level` (step scores and trajectory totals
 * are different quantities and must not share one fit). Pairs are in first-label order.
 */
export function pairLabels(labels: readonly HumanLabel[], trajectories: Iterable<Trajectory>, options: { level?: CalibrationLevel } = {}): PairedLabels {
  const stepLabels = labels.filter((l) => l.stepIndex !== undefined).length;
  const trajLabels = labels.length - stepLabels;
  let level = options.level;
  if (level === undefined) {
    if (stepLabels > 0 && trajLabels > 0) {
      throw new ConfigError(
        `labels mix ${stepLabels} step-level and ${trajLabels} trajectory-level lines; choose one with level: 'step' or 'trajectory'`,
      );
    }
    level = stepLabels > 0 ? 'step' : 'trajectory';
  }
  const byId = new Map<string, Trajectory>();
  for (const t of trajectories) byId.set(t.id, t);

  const groups = new Map<string, { trajectoryId: string; stepIndex?: number; sum: number; count: number }>();
  let ignored = 0;
  for (const l of labels) {
    const isStep = l.stepIndex !== undefined;
    if (isStep !== (level === 'step')) {
      ignored++;
      continue;
    }
    const key = `${l.trajectoryId}\u0000${l.stepIndex ?? ''}`;
    const g = groups.get(key);
    if (g) {
      g.sum += l.score;
      g.count++;
    } else {
      groups.set(key, { trajectoryId: l.trajectoryId, ...defined({ stepIndex: l.stepIndex }), sum: l.score, count: 1 });
    }
  }

  const pairs: CalibrationPair[] = [];
  const unmatched: UnmatchedLabel[] = [];
  for (const g of groups.values()) {
    const where = { trajectoryId: g.trajectoryId, ...defined({ stepIndex: g.stepIndex }) };
    const t = byId.get(g.trajectoryId);
    if (!t) {
      unmatched.push({ ...where, reason: 'unknown trajectory' });
      continue;
    }
    let auto: number | undefined;
    if (g.stepIndex !== undefined) {
      const step = t.steps.find((s) => s.index === g.stepIndex);
      if (!step) {
        unmatched.push({ ...where, reason: 'no such step' });
        continue;
      }
      auto = step.reward?.score;
      if (auto === undefined) {
        unmatched.push({ ...where, reason: 'step not scored' });
        continue;
      }
    } else {
      auto = t.reward?.total;
      if (auto === undefined) {
        unmatched.push({ ...where, reason: 'trajectory not scored' });
        continue;
      }
    }
    pairs.push({ ...where, auto, human: g.sum / g.count, labels: g.count });
  }
  return { level, pairs, unmatched, ignored };
}
