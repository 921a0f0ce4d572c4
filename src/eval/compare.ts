import { ConfigError } from '../core/errors.js';
import { finiteOrNull } from './format.js';
import { METRIC_INFO, metricValue, type MetricName } from './metrics.js';
import type { EvalResult, Interval, PassKSummary } from './result.js';
import { bootstrapMeanDifferenceCi, pairedBootstrapMeanDifferenceCi } from '../core/stats/bootstrap.js';
import { bonferroni, holm } from '../core/stats/corrections.js';
import { mean } from '../core/stats/descriptive.js';
import { mannWhitneyU } from '../core/stats/mann-whitney.js';
import { mcnemarExact } from '../core/stats/mcnemar.js';
import { pairedTTest } from '../core/stats/paired-t.js';
import { welchTTest } from '../core/stats/welch.js';
import { defined } from '../core/defined.js';

/**
 * Compares evaluation results of several agents on one environment split: pairwise tests of one
 * metric (Welch's t, Mann–Whitney U, paired t over shared tasks, exact McNemar over shared episodes), a bootstrap interval of each
 * difference, Holm and Bonferroni corrections across all comparisons, and a leaderboard with
 * significance marks. See docs/evaluation.md for how to read it.
 */

/** The format tag of {@link CompareResult}. */
export const COMPARE_RESULT_FORMAT = 'gymflow.compare/v1';

/** Which pairs to test: every pair, or every result against the first (the baseline). */
export type CompareMode = 'all-pairs' | 'baseline';

/** The test whose Holm-adjusted p-value decides significance marks. */
export type PrimaryTest = 'welch' | 'mann-whitney' | 'paired' | 'mcnemar';

/** Options of {@link compare}. */
export interface CompareOptions {
  /** The metric compared. Default `reward`. */
  metric?: MetricName;
  /** Default `all-pairs`. */
  mode?: CompareMode;
  /** Test behind the significance marks. Default `welch` (needs no pairing, robust to unequal variances). */
  primary?: PrimaryTest;
  /** Family-wise error rate for the marks. Default 0.05. */
  alpha?: number;
  /** Coverage of the difference intervals. Default 0.95. */
  confidence?: number;
  /** Bootstrap resamples. Default 2000. */
  resamples?: number;
  /** Bootstrap seed. Default 0. */
  seed?: number;
  /** Display names, one per result. Default: the agent specs, suffixed `#k` where they repeat. */
  labels?: readonly string[];
}

/** One test of one comparison, with its p-value adjusted across all comparisons of the run. */
export interface TestOutcome {
  /** t or z; null when infinite or undefined (zero standard error). */
  statistic: number | null;
  /** Raw two-sided p-value; null when undefined (e.g. both samples constant and equal). */
  p: number | null;
  /** Holm-adjusted p across all comparisons (same test); null when p is. */
  pHolm: number | null;
  /** Bonferroni-adjusted p across all comparisons (same test); null when p is. */
  pBonferroni: number | null;
}

/** One pairwise comparison, A − B. */
export interface Comparison {
  a: string;
  b: string;
  meanA: number;
  meanB: number;
  /** meanA − meanB. */
  difference: number;
  welch: TestOutcome & { df: number | null };
  /**
   * `statistic` is the z of max(U_A, U_B), so it is ≥ 0 whatever the direction; read the direction from `u`.
   * `p` comes from the exact null distribution of U when the pooled values have no ties and one group has ≤ 8
   * (scipy's `method='auto'`; see `mannWhitneyU` for the size limit), from the normal approximation otherwise;
   * `method` says which.
   */
  mannWhitney: TestOutcome & {
    /** U of A. */
    u: number;
    /** Which null distribution gave `p`. */
    method: 'exact' | 'asymptotic';
    /** U_A / (n_A n_B): P(A > B) + ½ P(A = B) for a random episode of each. */
    probabilityOfSuperiority: number;
  };
  /** Paired t over the tasks both ran (per-task means); null with fewer than 2 shared tasks. */
  paired: (TestOutcome & { tasks: number; meanDifference: number; df: number }) | null;
  /**
   * Exact McNemar over the episodes both ran, matched by task id and episode seed (the same episode before and
   * after, with deterministic decoding): `onlyA` episodes only A solved, `onlyB` only B; `statistic` is
   * min(onlyA, onlyB). Null when the metric is not 0/1 on every matched episode (only `success` is), when no
   * episode matches, or when a result ran one (task, seed) twice.
   */
  mcnemar: (TestOutcome & { pairs: number; onlyA: number; onlyB: number }) | null;
  /**
   * Bootstrap percentile interval of the difference, around `estimate`. `paired-tasks` (resampling tasks, per-task
   * mean differences) when A and B ran the same task set: then `estimate` is the mean of per-task differences,
   * which differs from `difference` when tasks ran unequally often; `unpaired` (resampling each side's
   * episodes) otherwise, `estimate` = `difference`.
   */
  bootstrap: Interval & { estimate: number; design: 'paired-tasks' | 'unpaired' };
  /** The primary test's verdict at `alpha` after Holm's correction. */
  significant: boolean;
}

/** One leaderboard row, best first. */
export interface LeaderboardRow {
  rank: number;
  label: string;
  agent: string;
  n: number;
  mean: number;
  /** The result's own bootstrap interval of the metric's mean (from the eval file). */
  ci: Interval | null;
  /**
   * `*` when this row is significantly better than the next-ranked row (all-pairs mode), or
   * significantly different from the baseline (baseline mode); `''` otherwise.
   */
  mark: string;
  /** Labels of the rows this one beats significantly (primary test, Holm, alpha). */
  beats: string[];
  /** The result's own pass^1 … pass^trials (from its eval file), when it ran trials; whatever the metric. */
  passK?: PassKSummary[];
}

/** What {@link compare} returns (JSON-serialisable). */
export interface CompareResult {
  format: typeof COMPARE_RESULT_FORMAT;
  envId: string;
  split: string;
  metric: MetricName;
  higherIsBetter: boolean;
  mode: CompareMode;
  primary: PrimaryTest;
  alpha: number;
  confidence: number;
  resamples: number;
  comparisons: Comparison[];
  leaderboard: LeaderboardRow[];
}

interface Entry {
  label: string;
  result: EvalResult;
  values: number[];
  /** Per-task mean of the metric. */
  byTask: Map<string, number>;
  /** The metric per episode, keyed by task id and seed; null when a (task, seed) repeats. */
  byEpisode: Map<string, number> | null;
}

/** The key that matches one episode across results: its task and its seed. */
function episodeKey(taskId: string, seed: number): string {
  return `${taskId}\u0000${seed}`;
}

/**
 * Compares 2+ evaluation results of one environment and split.
 *
 * Paired analysis: episodes are matched **by task id**; when a task ran several times in a result, its
 * episodes are averaged first, so each task contributes one pair (a task is the unit that is shared;
 * seeds may differ). The paired t-test uses the tasks both results ran.
 *
 * @example
 * ```ts
 * const report = compare([expert, random], { metric: 'success' });
 * report.leaderboard[0]; // { rank: 1, label: 'expert', mark: '*', beats: ['random'], … }
 * ```
 * @throws ConfigError when fewer than 2 results are given, they come from different environments or
 * splits, or a result has fewer than 2 values of the metric.
 */
export function compare(results: readonly EvalResult[], options: CompareOptions = {}): CompareResult {
  const metric = options.metric ?? 'reward';
  const mode = options.mode ?? 'all-pairs';
  const primary = options.primary ?? 'welch';
  const alpha = options.alpha ?? 0.05;
  const confidence = options.confidence ?? 0.95;
  const resamples = options.resamples ?? 2000;
  const seed = options.seed ?? 0;
  const info = METRIC_INFO[metric];
  if (!info) throw new ConfigError(`compare: unknown metric '${String(metric)}'; known: ${Object.keys(METRIC_INFO).join(', ')}`);
  if (results.length < 2) throw new ConfigError(`compare: need at least 2 results, got ${results.length}`);
  if (!(alpha > 0 && alpha < 1)) throw new ConfigError(`compare: alpha must be in (0, 1), got ${alpha}`);
  if (options.labels && options.labels.length !== results.length) {
    throw new ConfigError(`compare: ${options.labels.length} labels for ${results.length} results`);
  }
  const labels = options.labels ? [...options.labels] : defaultLabels(results);
  if (new Set(labels).size !== labels.length) throw new ConfigError(`compare: labels must be distinct, got ${labels.join(', ')}`);

  const first = results[0] as EvalResult;
  const entries: Entry[] = results.map((result, i) => {
    const label = labels[i] as string;
    if (result.envId !== first.envId) {
      throw new ConfigError(`compare: '${label}' evaluated ${result.envId} but '${labels[0]}' evaluated ${first.envId}; compare one environment at a time`);
    }
    if (result.split !== first.split) {
      throw new ConfigError(`compare: '${label}' ran the ${result.split} split but '${labels[0]}' ran ${first.split}`);
    }
    const pairs = result.episodes.flatMap((e) => {
      const v = metricValue(e, metric);
      return v === null ? [] : [{ task: e.taskId, key: episodeKey(e.taskId, e.seed), v }];
    });
    if (pairs.length < 2) {
      throw new ConfigError(`compare: '${label}' has ${pairs.length} episode(s) with a ${metric} value; at least 2 needed`);
    }
    const groups = new Map<string, number[]>();
    for (const p of pairs) groups.set(p.task, [...(groups.get(p.task) ?? []), p.v]);
    const byEpisode = new Map(pairs.map((p) => [p.key, p.v]));
    return {
      label,
      result,
      values: pairs.map((p) => p.v),
      byTask: new Map([...groups].map(([t, vs]) => [t, mean(vs)])),
      byEpisode: byEpisode.size === pairs.length ? byEpisode : null,
    };
  });

  const pairsToTest: [Entry, Entry][] = [];
  if (mode === 'baseline') for (const e of entries.slice(1)) pairsToTest.push([entries[0] as Entry, e]);
  else for (let i = 0; i < entries.length; i++) for (let j = i + 1; j < entries.length; j++) pairsToTest.push([entries[i] as Entry, entries[j] as Entry]);

  const raw = pairsToTest.map(([a, b], k) => compareTwo(a, b, { confidence, resamples, seed: (seed + k) >>> 0 }));
  // Corrections run per test family, across every comparison of this call.
  const adjust = (ps: (number | null)[]): { holm: (number | null)[]; bonferroni: (number | null)[] } => {
    const nums = ps.map((p) => p ?? Number.NaN);
    return { holm: holm(nums).map(finiteOrNull), bonferroni: bonferroni(nums).map(finiteOrNull) };
  };
  const w = adjust(raw.map((c) => c.welch.p));
  const u = adjust(raw.map((c) => c.mannWhitney.p));
  const pt = adjust(raw.map((c) => c.paired?.p ?? null));
  const mc = adjust(raw.map((c) => c.mcnemar?.p ?? null));
  const comparisons: Comparison[] = raw.map((c, k) => {
    const welch = { ...c.welch, pHolm: w.holm[k] ?? null, pBonferroni: w.bonferroni[k] ?? null };
    const mannWhitney = { ...c.mannWhitney, pHolm: u.holm[k] ?? null, pBonferroni: u.bonferroni[k] ?? null };
    const paired = c.paired ? { ...c.paired, pHolm: pt.holm[k] ?? null, pBonferroni: pt.bonferroni[k] ?? null } : null;
    const mcnemar = c.mcnemar ? { ...c.mcnemar, pHolm: mc.holm[k] ?? null, pBonferroni: mc.bonferroni[k] ?? null } : null;
    const chosen = primary === 'welch' ? welch : primary === 'mann-whitney' ? mannWhitney : primary === 'paired' ? paired : mcnemar;
    const significant = chosen !== null && chosen.pHolm !== null && chosen.pHolm < alpha;
    return { ...c, welch, mannWhitney, paired, mcnemar, significant };
  });

  return {
    format: COMPARE_RESULT_FORMAT,
    envId: first.envId,
    split: first.split,
    metric,
    higherIsBetter: info.higherIsBetter,
    mode,
    primary,
    alpha,
    confidence,
    resamples,
    comparisons,
    leaderboard: leaderboard(entries, comparisons, metric, info.higherIsBetter, mode, primary),
  };
}

function defaultLabels(results: readonly EvalResult[]): string[] {
  const counts = new Map<string, number>();
  for (const r of results) counts.set(r.agent, (counts.get(r.agent) ?? 0) + 1);
  return results.map((r, i) => ((counts.get(r.agent) ?? 0) > 1 ? `${r.agent}#${i + 1}` : r.agent));
}

type RawComparison = Omit<Comparison, 'welch' | 'mannWhitney' | 'paired' | 'mcnemar' | 'significant'> & {
  welch: Omit<Comparison['welch'], 'pHolm' | 'pBonferroni'>;
  mannWhitney: Omit<Comparison['mannWhitney'], 'pHolm' | 'pBonferroni'>;
  paired: Omit<NonNullable<Comparison['paired']>, 'pHolm' | 'pBonferroni'> | null;
  mcnemar: Omit<NonNullable<Comparison['mcnemar']>, 'pHolm' | 'pBonferroni'> | null;
};

/** Exact McNemar over the episodes A and B both ran (see {@link Comparison.mcnemar}). */
function mcnemarOf(a: Entry, b: Entry): RawComparison['mcnemar'] {
  if (!a.byEpisode || !b.byEpisode) return null;
  const shared = [...a.byEpisode.keys()].filter((k) => b.byEpisode?.has(k));
  const xa = shared.map((k) => a.byEpisode?.get(k) as number);
  const xb = shared.map((k) => b.byEpisode?.get(k) as number);
  if (shared.length === 0 || ![...xa, ...xb].every((v) => v === 0 || v === 1)) return null;
  const r = mcnemarExact(xa, xb);
  return { pairs: shared.length, onlyA: r.onlyX, onlyB: r.onlyY, statistic: r.statistic, p: r.pValue };
}

function compareTwo(a: Entry, b: Entry, boot: { confidence: number; resamples: number; seed: number }): RawComparison {
  const welch = welchTTest(a.values, b.values, { confidence: boot.confidence });
  const mw = mannWhitneyU(a.values, b.values);
  const shared = [...a.byTask.keys()].filter((t) => b.byTask.has(t)).sort();
  const xa = shared.map((t) => a.byTask.get(t) as number);
  const xb = shared.map((t) => b.byTask.get(t) as number);
  let paired: RawComparison['paired'] = null;
  if (shared.length >= 2) {
    const r = pairedTTest(xa, xb, { confidence: boot.confidence });
    paired = { tasks: shared.length, meanDifference: r.estimate, df: r.df, statistic: finiteOrNull(r.statistic), p: finiteOrNull(r.pValue) };
  }
  const sameTasks = shared.length >= 2 && shared.length === a.byTask.size && shared.length === b.byTask.size;
  const ci = sameTasks
    ? pairedBootstrapMeanDifferenceCi(xa, xb, boot)
    : bootstrapMeanDifferenceCi(a.values, b.values, boot);
  const meanA = mean(a.values);
  const meanB = mean(b.values);
  return {
    a: a.label,
    b: b.label,
    meanA,
    meanB,
    difference: meanA - meanB,
    welch: { statistic: finiteOrNull(welch.statistic), df: finiteOrNull(welch.df), p: finiteOrNull(welch.pValue) },
    mannWhitney: {
      statistic: finiteOrNull(mw.z),
      u: mw.u1,
      method: mw.method,
      probabilityOfSuperiority: mw.probabilityOfSuperiority,
      p: mw.pValue,
    },
    paired,
    mcnemar: mcnemarOf(a, b),
    bootstrap: { estimate: ci.estimate, low: ci.low, high: ci.high, design: sameTasks ? 'paired-tasks' : 'unpaired' },
  };
}

function leaderboard(
  entries: readonly Entry[],
  comparisons: readonly Comparison[],
  metric: MetricName,
  higherIsBetter: boolean,
  mode: CompareMode,
  primary: PrimaryTest,
): LeaderboardRow[] {
  const better = (x: number, y: number): boolean => (higherIsBetter ? x > y : x < y);
  /**
   * Whether `e` is ahead of `o` in the direction the primary test measured: the paired test compares per-task
   * means, whose mean difference can have the other sign than the episode means' (tasks run unequally often).
   */
  const ahead = (e: Entry, o: Entry, c: Comparison | undefined): boolean => {
    if (primary === 'paired' && c?.paired) {
      const d = c.a === e.label ? c.paired.meanDifference : -c.paired.meanDifference;
      return better(d, 0);
    }
    return better(mean(e.values), mean(o.values));
  };
  const ranked = [...entries].sort((x, y) => {
    const mx = mean(x.values);
    const my = mean(y.values);
    return mx === my ? x.label.localeCompare(y.label) : better(mx, my) ? -1 : 1;
  });
  const find = (p: string, q: string): Comparison | undefined => comparisons.find((c) => (c.a === p && c.b === q) || (c.a === q && c.b === p));
  const baseline = entries[0]?.label;
  return ranked.map((e, i) => {
    const m = mean(e.values);
    const beats = ranked
      .filter((o) => {
        const c = find(e.label, o.label);
        return o !== e && c?.significant === true && ahead(e, o, c);
      })
      .map((o) => o.label);
    let mark = '';
    if (mode === 'all-pairs') {
      const nextRow = ranked[i + 1];
      if (nextRow && beats.includes(nextRow.label)) mark = '*';
    } else if (e.label !== baseline && baseline !== undefined && find(e.label, baseline)?.significant === true) {
      mark = '*';
    }
    const summary = e.result.metrics[metric];
    return {
      rank: i + 1,
      label: e.label,
      agent: e.result.agent,
      n: e.values.length,
      mean: m,
      ci: summary.ci,
      mark,
      beats,
      ...defined({ passK: e.result.passK }),
    };
  });
}
