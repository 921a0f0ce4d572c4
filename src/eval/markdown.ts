import type { CompareResult } from './compare.js';
import {
  exactMannWhitneyNote,
  formatCalibration,
  formatDifferenceInterval,
  formatInterval,
  formatP,
  formatPassK,
  formatValue,
  passKComparisonRows,
  passKHeading,
} from './format.js';
import { EVAL_METRICS, type MetricName } from './metrics.js';
import type { EvalResult } from './result.js';

/** Escapes a cell for a Markdown table. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function table(headers: readonly string[], rows: readonly (readonly string[])[], rightAligned: ReadonlySet<number>): string {
  const rule = headers.map((_, i) => (rightAligned.has(i) ? '---:' : '---'));
  return [headers, rule, ...rows].map((r) => `| ${r.map(cell).join(' | ')} |`).join('\n');
}

const METRIC_LABELS: Record<MetricName, string> = {
  success: 'success rate',
  score: 'outcome score',
  reward: 'reward (return)',
  steps: 'steps',
  toolCalls: 'tool calls',
  invalidActions: 'invalid actions',
  tokens: 'tokens',
  costUsd: 'cost (USD)',
};

/**
 * An evaluation result as a Markdown section: a one-line header (environment, agent, split, n, seed)
 * and a table of every metric's mean, sd and bootstrap interval; the success row also shows the
 * Wilson interval. Metrics no episode recorded (tokens) show `—`. A result with trials adds a pass^k line.
 */
export function toMarkdown(result: EvalResult): string {
  const pct = Math.round(result.confidence * 100);
  const rows = EVAL_METRICS.map((m) => {
    const s = result.metrics[m];
    const digits = m === 'costUsd' ? 4 : 3;
    return [METRIC_LABELS[m], formatValue(s.mean, digits), formatValue(s.sd, digits), formatInterval(s.ci, digits), String(s.n)];
  });
  const success = result.metrics.success;
  const passK = passKHeading(result);
  return [
    `### ${result.agent} on ${result.envId}`,
    '',
    `${result.split} split · ${result.n} episodes over ${result.tasks} tasks${result.trials === undefined ? '' : ` · ${result.trials} trials`} · seed ${result.seed} · ` +
      (result.envKwargs === undefined ? '' : `environment options \`${JSON.stringify(result.envKwargs)}\` · `) +
      `${pct}% bootstrap percentile intervals (B = ${result.resamples})`,
    '',
    table(['metric', 'mean', 'sd', `${pct}% CI`, 'n'], rows, new Set([1, 2, 4])),
    '',
    `Success: ${success.successes}/${success.n}, Wilson ${pct}% interval ${formatInterval(success.wilson)}.`,
    ...(passK !== undefined && result.passK ? ['', `${passK}: ${formatPassK(result.passK)}.`] : []),
    ...(result.calibration ? ['', `Calibration: ${formatCalibration(result.calibration)}.`] : []),
    ...(result.notes ? ['', ...result.notes.map((n) => `Note: ${n}.`)] : []),
    '',
  ].join('\n');
}

/**
 * A comparison as Markdown: the leaderboard (rank, mean, interval, mark, what each row beats) and the
 * pairwise table (difference with its bootstrap interval; Welch, Mann–Whitney and paired p-values,
 * raw and Holm-adjusted), with a legend; when every result ran trials, their pass^k side by side.
 */
export function compareToMarkdown(result: CompareResult): string {
  const pct = Math.round(result.confidence * 100);
  const direction = result.higherIsBetter ? 'higher is better' : 'lower is better';
  const board = table(
    ['rank', 'agent', `mean ${result.metric}`, `${pct}% CI`, 'n', 'sig', 'significantly better than'],
    result.leaderboard.map((r) => [
      String(r.rank),
      r.label,
      formatValue(r.mean),
      formatInterval(r.ci),
      String(r.n),
      r.mark,
      r.beats.join(', ') || '—',
    ]),
    new Set([0, 2, 4]),
  );
  // McNemar's column only where it applies (a 0/1 metric on matched episodes), so other reports read as before.
  const withMcnemar = result.comparisons.some((c) => c.mcnemar);
  const pairs = table(
    [
      'A',
      'B',
      'A − B',
      `${pct}% CI (bootstrap)`,
      'Welch p (Holm)',
      'Mann–Whitney p (Holm)',
      'paired p (Holm) [tasks]',
      ...(withMcnemar ? ['McNemar p (Holm) [only A/only B of pairs]'] : []),
      'significant',
    ],
    result.comparisons.map((c) => [
      c.a,
      c.b,
      formatValue(c.difference),
      formatDifferenceInterval(c),
      `${formatP(c.welch.p)} (${formatP(c.welch.pHolm)})`,
      `${formatP(c.mannWhitney.p)} (${formatP(c.mannWhitney.pHolm)})${c.mannWhitney.method === 'exact' ? ' exact' : ''}`,
      c.paired ? `${formatP(c.paired.p)} (${formatP(c.paired.pHolm)}) [${c.paired.tasks}]` : '—',
      ...(withMcnemar ? [c.mcnemar ? `${formatP(c.mcnemar.p)} (${formatP(c.mcnemar.pHolm)}) [${c.mcnemar.onlyA}/${c.mcnemar.onlyB} of ${c.mcnemar.pairs}]` : '—'] : []),
      c.significant ? 'yes' : 'no',
    ]),
    new Set([2]),
  );
  const passK = passKComparisonRows(result.leaderboard);
  const markMeaning =
    result.mode === 'all-pairs' ? '`*`: significantly better than the next-ranked agent' : '`*`: significantly different from the baseline (first result)';
  return [
    `### ${result.metric} on ${result.envId} (${result.split}; ${direction})`,
    '',
    board,
    '',
    pairs,
    '',
    `${markMeaning}; significance = ${result.primary} test, Holm-adjusted p < ${result.alpha} across ${result.comparisons.length} comparison(s).`,
    ...(result.comparisons.some((c) => c.mannWhitney.method === 'exact')
      ? ['', `${exactMannWhitneyNote('Mann–Whitney p')}.`]
      : []),
    ...(passK
      ? ['', table(passK.header, passK.rows, new Set()), '', `pass^k from each result (${pct}% bootstrap over tasks): the chance that all k trials of a task succeed.`]
      : []),
    '',
  ].join('\n');
}
