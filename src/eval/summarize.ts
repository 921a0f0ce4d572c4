import { Rng } from '../core/rng.js';
import { EVAL_METRICS, metricValue, type EpisodeRecord, type MetricName } from './metrics.js';
import type { MetricSummaries, MetricSummary, SuccessSummary } from './result.js';
import { bootstrapMeanCi } from '../core/stats/bootstrap.js';
import { mean, standardDeviation } from '../core/stats/descriptive.js';
import { wilsonInterval } from '../core/stats/wilson.js';

/** How {@link summarizeEpisodes} builds its intervals. */
export interface SummaryOptions {
  /** Interval coverage. Default 0.95. */
  confidence?: number;
  /** Bootstrap resamples B. Default 2000. */
  resamples?: number;
  /** Seed of the bootstrap streams (one independent stream per metric). Default 0. */
  seed?: number;
}

/**
 * Summarises episodes metric by metric: mean, sample sd, and a percentile-bootstrap interval of the
 * mean (each metric resampled with its own seeded stream, so adding a metric never shifts another's
 * interval); the success rate also gets a Wilson score interval. Episodes without a value for a metric
 * (no token counts) are left out of that metric only.
 */
export function summarizeEpisodes(episodes: readonly EpisodeRecord[], options: SummaryOptions = {}): MetricSummaries {
  const confidence = options.confidence ?? 0.95;
  const resamples = options.resamples ?? 2000;
  const seeds = new Rng(options.seed ?? 0);
  const out: Partial<Record<MetricName, MetricSummary>> = {};
  for (const metric of EVAL_METRICS) {
    const seed = seeds.nextUint32();
    const values = episodes.map((e) => metricValue(e, metric)).filter((v): v is number => v !== null);
    out[metric] = summarizeValues(values, { confidence, resamples, seed });
  }
  const successes = episodes.filter((e) => e.success).length;
  const wilson = episodes.length > 0 ? wilsonInterval(successes, episodes.length, confidence) : null;
  const success: SuccessSummary = {
    ...(out.success as MetricSummary),
    successes,
    wilson: wilson ? { low: wilson.low, high: wilson.high } : null,
  };
  return { ...(out as Record<MetricName, MetricSummary>), success };
}

/** Mean, sd and bootstrap interval of plain values (see {@link summarizeEpisodes}). */
export function summarizeValues(values: readonly number[], options: Required<SummaryOptions>): MetricSummary {
  if (values.length === 0) return { n: 0, mean: null, sd: null, ci: null };
  const ci = bootstrapMeanCi(values, options);
  return {
    n: values.length,
    mean: mean(values),
    sd: values.length >= 2 ? standardDeviation(values) : null,
    ci: { low: ci.low, high: ci.high },
  };
}
