import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { ConfigError, SchemaError } from '../../core/errors.js';
import { assertNotAnInput, checkNewOutput, writeFileAtomically } from '../../core/output-file.js';
import { compare, type CompareResult, type PrimaryTest } from '../../eval/compare.js';
import { exactMannWhitneyNote, formatDifferenceInterval, formatInterval, formatP, formatValue, passKComparisonRows } from '../../eval/format.js';
import { compareToMarkdown } from '../../eval/markdown.js';
import { EVAL_METRICS, type MetricName } from '../../eval/metrics.js';
import { parseEvalResult, type EvalResult } from '../../eval/result.js';
import { parseInteger, parsePositiveInteger, printJson } from '../options.js';
import { formatTable } from '../table.js';
import { openStore, withStoreOption } from './store.js';
import { parseOpenUnit } from './eval.js';
import { defined } from '../../core/defined.js';

interface CompareOpts {
  store?: string;
  metric: MetricName;
  baseline?: boolean;
  test: PrimaryTest;
  alpha: number;
  resamples: number;
  seed: number;
  json?: boolean;
  markdown?: string;
  force?: boolean;
}

function parseMetric(value: string): MetricName {
  const m = EVAL_METRICS.find((x) => x === value);
  if (!m) throw new InvalidArgumentError(`expected one of ${EVAL_METRICS.join(', ')}, got '${value}'`);
  return m;
}

function parseTest(value: string): PrimaryTest {
  if (value === 'welch' || value === 'mann-whitney' || value === 'paired' || value === 'mcnemar') return value;
  throw new InvalidArgumentError(`expected welch, mann-whitney, paired or mcnemar, got '${value}'`);
}

/**
 * Reads and validates an eval result: a JSON file, or else an `eval` artifact in the store by ref or
 * name (`gymflow eval --save NAME`). Errors name the input.
 */
export async function loadEvalResult(file: string, storeRoot?: string): Promise<EvalResult> {
  let text: string;
  if (existsSync(file)) {
    text = readFileSync(file, 'utf8');
  } else {
    try {
      const store = await openStore(defined({ store: storeRoot }));
      text = (await store.get(await store.resolve(file))).toString('utf8');
    } catch (err) {
      throw new ConfigError(`cannot read eval result ${file}: not a file, and not in the store (${(err as Error).message})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SchemaError(`${file} $: invalid JSON (${(err as Error).message})`);
  }
  return parseEvalResult(value, file);
}

/**
 * Labels for the results: agent specs; file names where two results share a spec; `spec#k` (compare's
 * default) when the file names collide too.
 */
export function labelsFor(files: readonly string[], results: readonly EvalResult[]): string[] | undefined {
  const distinct = (xs: readonly string[]): boolean => new Set(xs).size === xs.length;
  const agents = results.map((r) => r.agent);
  if (distinct(agents)) return agents;
  const names = files.map((f) => basename(f).replace(/\.json$/, ''));
  if (distinct(names)) return names;
  return distinct(files) ? [...files] : undefined;
}

/**
 * `gymflow compare`: compares 2+ results written by `gymflow eval --out` on one metric — Welch's t,
 * Mann–Whitney U and paired t per pair, bootstrap intervals of the differences, Holm/Bonferroni
 * adjustment, and a leaderboard with significance marks.
 */
export function compareCommand(program: Command): void {
  withStoreOption(program.command('compare'))
    .description('compare eval results (from `gymflow eval --out`): significance tests and a leaderboard')
    .argument('<results...>', 'two or more eval results: JSON files, or store names/refs saved by `gymflow eval --save`')
    .option('--metric <name>', `metric to compare: ${EVAL_METRICS.join(' | ')}`, parseMetric, 'reward')
    .option('--baseline', 'compare every result with the first one only (default: all pairs)')
    .option('--test <name>', 'test behind the significance marks: welch | mann-whitney | paired (t over tasks) | mcnemar (exact, over episodes; success)', parseTest, 'welch')
    .option('--alpha <a>', 'family-wise error rate (Holm)', parseOpenUnit, 0.05)
    .option('--resamples <b>', 'bootstrap resamples', parsePositiveInteger, 2000)
    .option('--seed <n>', 'bootstrap seed', parseInteger, 0)
    .option('--markdown <file>', 'write the Markdown report to this file')
    .option('--force', 'replace an existing --markdown file (by default an error)')
    .option('--json', 'print the comparison JSON')
    .action(async (files: string[], opts: CompareOpts) => {
      if (files.length < 2) throw new ConfigError(`compare: need at least 2 results (eval result files or store names), got ${files.length}`);
      if (opts.markdown !== undefined) {
        await assertNotAnInput(opts.markdown, files.filter((f) => existsSync(f)), '--markdown');
        await checkNewOutput(opts.markdown, { force: opts.force === true });
      }
      const results = await Promise.all(files.map((f) => loadEvalResult(f, opts.store)));
      const labels = labelsFor(files, results);
      const report = compare(results, {
        metric: opts.metric,
        mode: opts.baseline ? 'baseline' : 'all-pairs',
        primary: opts.test,
        alpha: opts.alpha,
        resamples: opts.resamples,
        seed: opts.seed,
        confidence: results[0]?.confidence ?? 0.95,
        ...defined({ labels }),
      });
      if (opts.markdown) await writeFileAtomically(opts.markdown, compareToMarkdown(report), { replace: opts.force === true });
      if (opts.json) return printJson(report);
      console.log(formatCompareTables(report));
      if (opts.markdown) console.log(`markdown written to ${opts.markdown}`);
    });
}

/** The terminal form of a comparison: leaderboard, pairwise table, legend; pass^k when every result has it. */
export function formatCompareTables(report: CompareResult): string {
  const pct = Math.round(report.confidence * 100);
  const board = formatTable(
    report.leaderboard.map((r) => ({ ...r, mean: formatValue(r.mean), ci: formatInterval(r.ci), beats: r.beats.join(', ') || '-' })),
    [
      { key: 'rank', align: 'right' },
      { key: 'label', header: 'agent' },
      { key: 'mean', header: `mean ${report.metric}`, align: 'right' },
      { key: 'ci', header: `${pct}% CI` },
      { key: 'n', align: 'right' },
      { key: 'mark', header: 'sig' },
      { key: 'beats', header: 'better than' },
    ],
  );
  const pairs = formatTable(
    report.comparisons.map((c) => ({
      pair: `${c.a} - ${c.b}`,
      diff: formatValue(c.difference),
      ci: formatDifferenceInterval(c),
      welch: `${formatP(c.welch.p)} (${formatP(c.welch.pHolm)})`,
      mw: `${formatP(c.mannWhitney.p)} (${formatP(c.mannWhitney.pHolm)})${c.mannWhitney.method === 'exact' ? ' exact' : ''}`,
      paired: c.paired ? `${formatP(c.paired.p)} (${formatP(c.paired.pHolm)}) [${c.paired.tasks}]` : '-',
      mcnemar: c.mcnemar ? `${formatP(c.mcnemar.p)} (${formatP(c.mcnemar.pHolm)}) [${c.mcnemar.onlyA}/${c.mcnemar.onlyB} of ${c.mcnemar.pairs}]` : '-',
      sig: c.significant ? 'yes' : 'no',
    })),
    [
      { key: 'pair', header: 'A - B' },
      { key: 'diff', header: 'diff', align: 'right' },
      { key: 'ci', header: `${pct}% CI` },
      { key: 'welch', header: 'Welch p (Holm)' },
      { key: 'mw', header: 'MWU p (Holm)' },
      { key: 'paired', header: 'paired p (Holm) [tasks]' },
      // McNemar's column only where it applies (a 0/1 metric on matched episodes), so other reports read as before.
      ...(report.comparisons.some((c) => c.mcnemar) ? [{ key: 'mcnemar' as const, header: 'McNemar p (Holm) [only A/only B of pairs]' }] : []),
      { key: 'sig', header: 'significant' },
    ],
  );
  const mark = report.mode === 'all-pairs' ? '* = significantly better than the next-ranked agent' : '* = significantly different from the baseline';
  // Said only when it happens, so the usual report (large groups or ties: all asymptotic) reads as before.
  const exact = report.comparisons.some((c) => c.mannWhitney.method === 'exact')
    ? [exactMannWhitneyNote('MWU p')]
    : [];
  const passK = passKComparisonRows(report.leaderboard);
  const passKTable = passK
    ? [
        '',
        formatTable(
          passK.rows.map((r) => Object.fromEntries(r.map((v, i) => [String(i), v]))),
          passK.header.map((h, i) => ({ key: String(i), header: h })),
        ),
        `pass^k from each result (${pct}% bootstrap over tasks)`,
      ]
    : [];
  return [
    `${report.envId} (${report.split}) metric=${report.metric} (${report.higherIsBetter ? 'higher' : 'lower'} is better)`,
    board,
    '',
    pairs,
    '',
    `${mark}; ${report.primary} test, Holm-adjusted p < ${report.alpha} over ${report.comparisons.length} comparison(s)`,
    ...exact,
    ...passKTable,
  ].join('\n');
}
