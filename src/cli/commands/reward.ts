import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { ConfigError } from '../../core/errors.js';
import { stripBom } from '../../core/jsonl-file.js';
import { assertNotAnInput, checkNewOutput, realPathOf, writeFileAtomically } from '../../core/output-file.js';
import { getProfile, listProfiles } from '../../core/profiles/index.js';
import { fitCalibrationFromFiles, loadCalibration, readTrajectoriesFile, saveCalibration, type CalibrationLevel } from '../../reward/calibration/index.js';
import type { JudgeConfig, JudgeConfigInput } from '../../reward/judge/config.js';
import type { LlmJudge } from '../../reward/judge/llm-judge.js';
import type { ScoreOptions } from '../../reward/types.js';
import { defined } from '../../core/defined.js';
import { createJudge, parseJudgeConfig } from '../../reward/judge/config.js';
import { allRubrics } from '../../reward/rubric-list.js';
import { leaderboard, type LeaderboardGrouping } from '../../reward/leaderboard.js';
import { OnnxRewardModel } from '../../reward/learned/onnx-reward-model.js';
import { buildPreferences } from '../../reward/preferences.js';
import { scoreFile, type ScoreFileOptions } from '../../reward/score-file.js';
import type { JudgeUsage } from '../../reward/types.js';
import { parseNonNegativeInteger, parsePositiveInteger, printJson } from '../options.js';
import { formatNumber, formatTable } from '../table.js';

interface ScoreOpts {
  domain: string;
  out: string;
  judge?: string;
  model?: string;
  judgeBaseUrl?: string;
  judgeConfig?: string;
  calibration?: string;
  rewardModel?: string;
  learnedWeight: number;
  referenceSteps?: number;
  concurrency: number;
  workers: number;
  force?: boolean;
  json?: boolean;
}

/** A judge's usage on one line. */
function formatUsage(usage: JudgeUsage): string {
  return `${usage.requests} requests, ${usage.cacheHits} cache hits, ${usage.inputTokens}+${usage.outputTokens} tokens, $${usage.costUsd.toFixed(4)}, ${usage.failures} failures`;
}

function parseUnit(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`expected a non-negative number, got '${value}'`);
  return n;
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`expected a number > 0, got '${value}'`);
  return n;
}

function parseRange(value: string): [number, number] {
  const parts = value.split(',').map(Number);
  if (parts.length !== 2 || !parts.every(Number.isFinite) || (parts[0] as number) >= (parts[1] as number)) {
    throw new InvalidArgumentError(`expected MIN,MAX with MIN < MAX, got '${value}'`);
  }
  return [parts[0] as number, parts[1] as number];
}

/**
 * The judge configuration from the flags: `--judge-config FILE` (JSON, every field of the judge config),
 * overridden by `--judge`, `--model` and `--judge-base-url`. Without any of them there is no judge:
 * scoring never calls a paid API by surprise.
 */
function judgeConfigFrom(opts: ScoreOpts): JudgeConfigInput | undefined {
  let config: Record<string, unknown> = {};
  if (opts.judgeConfig) {
    let value: unknown;
    try {
      value = JSON.parse(stripBom(readFileSync(opts.judgeConfig, 'utf8')));
    } catch (err) {
      throw new ConfigError(`--judge-config ${opts.judgeConfig}: ${(err as Error).message}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ConfigError(`--judge-config ${opts.judgeConfig} $: expected a JSON object of judge settings, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
    }
    config = { ...(value as Record<string, unknown>) };
  }
  if (opts.judge) config.provider = opts.judge;
  if (opts.model) config.model = opts.model;
  if (opts.judgeBaseUrl) config.baseURL = opts.judgeBaseUrl;
  if (Object.keys(config).length === 0) return undefined;
  if (config.provider === undefined) {
    throw new ConfigError(`${opts.judgeConfig ? `--judge-config ${opts.judgeConfig} names no provider` : '--model given without a provider'}: add --judge anthropic|openai`);
  }
  if (config.model === undefined) throw new ConfigError(`--judge ${String(config.provider)} needs --model`);
  // Validated here so that a bad field is reported with the file it came from.
  return parseJudgeConfig(config, opts.judgeConfig ?? 'judge flags');
}

/** What {@link loadScoring} builds the reward layers from (the flags of `reward score`, the MCP tools' arguments). */
export interface ScoringInput {
  /** The domain profile whose rubric weights apply. */
  domain: string;
  /** The judge's configuration, validated by {@link parseJudgeConfig}; no judge without it. */
  judge?: JudgeConfigInput;
  /** Where `judge` came from, for its errors. */
  judgeSource?: string;
  /** A calibration file (`reward calibrate`). */
  calibration?: string;
  /** An ONNX reward model directory: the learned layer. */
  rewardModel?: string;
  /** The `learned` rubric's weight (default 0.2). */
  learnedWeight?: number;
  /** The efficiency rule's reference solution length. */
  referenceSteps?: number;
}

/** The reward layers ready to score with, and what to release afterwards. */
export interface Scoring {
  options: ScoreOptions;
  judge: LlmJudge | undefined;
  judgeConfig: JudgeConfig | undefined;
  /** Releases the learned model, if any. */
  release(): Promise<void>;
}

/**
 * The reward layers from their description: the profile, the judge (validated), the calibration, the learned model.
 *
 * @throws ConfigError / SchemaError naming the domain, the judge field or the file that is wrong.
 */
export async function loadScoring(input: ScoringInput): Promise<Scoring> {
  const options: ScoreOptions = { profile: getProfile(input.domain) };
  const judgeConfig = input.judge === undefined ? undefined : parseJudgeConfig(input.judge, input.judgeSource ?? 'judge');
  const judge = judgeConfig ? createJudge(judgeConfig) : undefined;
  if (judge) options.judge = judge;
  if (input.calibration !== undefined) options.calibration = await loadCalibration(input.calibration);
  if (input.referenceSteps !== undefined) options.referenceSteps = input.referenceSteps;
  const rewardModel = input.rewardModel !== undefined ? await OnnxRewardModel.load(input.rewardModel) : undefined;
  if (rewardModel) options.learned = { scorer: rewardModel, weight: input.learnedWeight ?? DEFAULT_LEARNED_WEIGHT };
  return { options, judge, judgeConfig, release: async () => void (await rewardModel?.release()) };
}

/** The default weight of the `learned` rubric. */
export const DEFAULT_LEARNED_WEIGHT = 0.2;

/** A judge's usage on one line (exported for the MCP tools' summaries). */
export { formatUsage };

/**
 * Prints the problems of the lines a command left out of a trajectory file (on stderr, so `--json` output
 * stays parseable) and makes the command exit non-zero, as `score` does for the lines it skips.
 */
function reportSkipped(errors: readonly string[]): void {
  if (errors.length === 0) return;
  for (const e of errors) console.error(e);
  console.error(`${errors.length} problem(s); the lines with them were left out`);
  process.exitCode = 1;
}

/** `gymflow reward …`: the process reward model on trajectory files. */
export function rewardCommand(program: Command): void {
  const reward = program.command('reward').description('process reward: score trajectories, calibrate to human labels, preferences, leaderboards');

  reward
    .command('score <file>')
    .description('score every step of every trajectory (rules; LLM judge and calibration when configured)')
    .requiredOption('--domain <name>', 'domain profile whose rubric weights apply (gymflow profiles); required')
    .requiredOption('-o, --out <file>', "scored JSONL, written atomically ('-' for stdout; the input file itself scores it in place)")
    .option('--judge <provider>', 'LLM judge provider: anthropic | openai (any OpenAI-compatible server)')
    .option('--model <name>', 'judge model')
    .option('--judge-base-url <url>', 'judge API base URL (e.g. http://localhost:8000/v1 for vLLM)')
    .option('--judge-config <file>', 'judge configuration JSON (prices, concurrency, cache path, retries, …)')
    .option('--calibration <file>', 'apply a calibration fitted by `gymflow reward calibrate`')
    .option('--reward-model <dir>', 'add the learned layer: an ONNX reward model (export-onnx kind: reward_model) scores every step as rubric `learned`')
    .option('--learned-weight <w>', 'weight of the `learned` rubric on the profile weight scale', parsePositive, DEFAULT_LEARNED_WEIGHT)
    .option('--reference-steps <n>', 'reference solution length for the efficiency rule (default: the profile step budget)', parsePositiveInteger)
    .option('--concurrency <n>', 'trajectories scored at once (matters with a judge)', parsePositiveInteger, 1)
    .option('--workers <n>', 'threads that parse and score lines, for large files (0: one per core; rules and calibration only, not with --judge or --reward-model)', parseNonNegativeInteger, 1)
    .option('--force', 'replace an existing -o file other than the input (by default an error)')
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, opts: ScoreOpts, cmd: Command) => {
      if (!opts.rewardModel && cmd.getOptionValueSource('learnedWeight') === 'cli') throw new ConfigError('--learned-weight given without --reward-model DIR');
      // Before any judge call: scoring in place is asked for by naming the input; any other file is new, or forced.
      const inPlace = opts.out !== '-' && (await realPathOf(opts.out)) === (await realPathOf(file));
      if (!inPlace) await checkNewOutput(opts.out, { force: opts.force === true, stdout: true });
      const judgeInput = judgeConfigFrom(opts);
      const scoring = await loadScoring({
        domain: opts.domain,
        learnedWeight: opts.learnedWeight,
        ...defined({ judge: judgeInput, calibration: opts.calibration, rewardModel: opts.rewardModel, referenceSteps: opts.referenceSteps }),
      });
      const options: ScoreFileOptions = { ...scoring.options, concurrency: opts.concurrency, workers: opts.workers, replace: opts.force === true };
      const { judge, judgeConfig } = scoring;
      let summary;
      try {
        summary = await scoreFile(file, opts.out, options);
      } catch (err) {
        // What the judge was paid for before the failure is spent either way: say how much, and how to keep it.
        const spent = judge?.usage();
        if (spent && spent.requests > 0) {
          const kept = judgeConfig?.cachePath !== undefined ? `its verdicts are in ${judgeConfig.cachePath}, so a rerun asks only for the rest` : 'its verdicts are lost: set cachePath in --judge-config so a rerun reuses them';
          console.error(`judge before the failure: ${formatUsage(spent)}; ${kept}`);
        }
        throw err;
      } finally {
        await scoring.release();
      }
      const usage = judge?.usage();
      // With `-o -` the scored trajectories are stdout, so the summary goes to stderr.
      const say = opts.out === '-' ? console.error : console.log;
      if (opts.json) say(JSON.stringify({ ...summary, judge: usage ?? null }, null, 2));
      else {
        for (const e of summary.errors) console.error(e);
        if (summary.written) say(`scored ${summary.scored} trajectories into ${opts.out === '-' ? 'stdout' : opts.out}; skipped ${summary.skipped}`);
        else console.error(`left ${file} unchanged: scoring it in place would drop its ${summary.skipped} invalid line(s); fix them, or write the ${summary.scored} valid trajectories elsewhere with -o OTHER.jsonl`);
        if (usage) say(`judge: ${formatUsage(usage)}`);
      }
      if (summary.skipped > 0) process.exitCode = 1;
    });

  reward
    .command('rescore <ref>')
    .description('score the trajectories of a stored set again with a reward configuration: a new scored set whose parent is REF, no episode re-run')
    .requiredOption('--config <file>', "reward configuration (YAML/JSON): the pipeline's reward section, or a whole pipeline configuration (its reward section is used)")
    .option('--name <name>', 'name the new set in the store (gymflow store ls)')
    .option('--store <dir>', 'artifact store root (default: $GYMFLOW_STORE, else .gymflow/store)')
    .option('--json', 'print the result as JSON')
    .action(async (source: string, opts: { config: string; name?: string; store?: string; json?: boolean }) => {
      const [{ loadRewardSection }, { openStore }, { rescoreSet }] = await Promise.all([import('../../runtime/config-file.js'), import('./store.js'), import('./reward-rescore.js')]);
      const section = await loadRewardSection(opts.config);
      const store = await openStore(opts);
      const r = await rescoreSet(store, source, section, { configFile: opts.config, ...defined({ name: opts.name }) });
      if (opts.json) return printJson(r);
      const line = (s: typeof r.before): string => `success ${formatNumber(s.successRate)}, mean reward ${formatNumber(s.meanReward)}`;
      console.log(`rescored ${r.after.episodes} trajectories of ${r.source} (${r.sourceKind}, ${r.envId}) with profile ${r.profile}`);
      console.log(`before: ${line(r.before)}`);
      console.log(`after:  ${line(r.after)}`);
      console.log(`${r.ref}${r.name !== undefined ? `  (${r.name})` : ''}`);
    });

  reward
    .command('calibrate')
    .description('fit a monotone (isotonic) map from automatic to human scores and report agreement with bootstrap CIs')
    .requiredOption('--labels <file>', 'human labels JSONL: {"trajectoryId", "stepIndex"?, "score"}')
    .requiredOption('--scored <file>', 'scored trajectories JSONL (from `gymflow reward score`)')
    .requiredOption('-o, --out <file>', 'where to save the calibration (JSON)')
    .option('--level <level>', 'step | trajectory (default: the labels\' own level, when they are all of one)')
    .option('--label-range <min,max>', 'scale of the human labels, mapped onto [0, 1] (e.g. 1,5)', parseRange)
    .option('--force', 'replace an existing -o file (by default an error)')
    .option('--json', 'print the report as JSON')
    .action(async (opts: { labels: string; scored: string; out: string; level?: string; labelRange?: [number, number]; force?: boolean; json?: boolean }) => {
      if (opts.level !== undefined && opts.level !== 'step' && opts.level !== 'trajectory') throw new ConfigError(`--level ${opts.level}: expected step or trajectory`);
      await assertNotAnInput(opts.out, [opts.labels, opts.scored]);
      await checkNewOutput(opts.out, { force: opts.force === true });
      const level: CalibrationLevel | undefined = opts.level;
      const { calibration, report, errors } = await fitCalibrationFromFiles(opts.labels, opts.scored, defined({ level, labelRange: opts.labelRange }));
      reportSkipped(errors);
      await saveCalibration(opts.out, calibration, { replace: opts.force === true });
      if (opts.json) return printJson(report);
      const ci = (i: { estimate: number; lo: number; hi: number }): string => `${formatNumber(i.estimate)} [${formatNumber(i.lo)}, ${formatNumber(i.hi)}]`;
      console.log(`${report.pairs} labelled ${report.level === 'step' ? 'steps' : 'trajectories'} paired (${report.unmatched} labels unmatched, ${report.ignored} ignored)`);
      console.log(
        formatTable(
          [
            { stat: 'Pearson', value: ci(report.raw.pearson) },
            { stat: 'Spearman', value: ci(report.raw.spearman) },
            { stat: 'Kendall tau-b', value: ci(report.raw.kendallTauB) },
            { stat: 'pairwise agreement', value: ci(report.raw.pairwiseAgreement) },
          ],
          [{ key: 'stat', header: 'automatic vs human' }, { key: 'value', header: 'estimate [95% CI]' }],
        ),
      );
      console.log(`MAE ${formatNumber(report.baseline.mae)} -> ${formatNumber(report.calibrated.mae)} after calibration; saved to ${opts.out}`);
    });

  reward
    .command('preferences <file>')
    .description('(chosen, rejected) pairs from scored trajectories of the same task, by score margin')
    .requiredOption('-o, --out <file>', 'pairs JSONL (written atomically)')
    .option('--min-margin <x>', 'smallest score difference kept', parseUnit, 0.1)
    .option('--max-pairs-per-task <n>', 'cap per task (largest margins kept)', parsePositiveInteger, 4)
    .option('--force', 'replace an existing -o file (by default an error)')
    .option('--json', 'print the statistics as JSON')
    .action(async (file: string, opts: { out: string; minMargin: number; maxPairsPerTask: number; force?: boolean; json?: boolean }) => {
      await assertNotAnInput(opts.out, [file]);
      await checkNewOutput(opts.out, { force: opts.force === true });
      const { trajectories, errors } = await readTrajectoriesFile(file);
      reportSkipped(errors);
      const { pairs, stats } = buildPreferences(trajectories, { minMargin: opts.minMargin, maxPairsPerTask: opts.maxPairsPerTask });
      await writeFileAtomically(opts.out, pairs.map((p) => `${JSON.stringify(p)}\n`).join(''), { replace: opts.force === true });
      if (opts.json) return printJson(stats);
      console.log(`${stats.pairs} pairs from ${stats.trajectories} trajectories over ${stats.tasks} tasks (dropped: ${stats.droppedTies} ties, ${stats.droppedBelowMargin} below margin, ${stats.droppedByCap} over the cap); written to ${opts.out}`);
    });

  reward
    .command('leaderboard <file>')
    .description('mean score and success rate with confidence intervals, by agent, model or task')
    .option('--by <key>', 'agent | model | task', 'agent')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { by: string; json?: boolean }) => {
      if (!['agent', 'model', 'task'].includes(opts.by)) throw new ConfigError(`--by ${opts.by}: expected agent, model or task`);
      const { trajectories, errors } = await readTrajectoriesFile(file);
      reportSkipped(errors);
      const rows = leaderboard(trajectories, { by: opts.by as LeaderboardGrouping });
      if (opts.json) return printJson(rows);
      const ci = (i: { estimate: number; lo: number; hi: number }): string => `${formatNumber(i.estimate)} [${formatNumber(i.lo)}, ${formatNumber(i.hi)}]`;
      console.log(
        formatTable(
          // One trajectory has no spread to resample: its bootstrap interval would claim certainty.
          rows.map((r, i) => ({ rank: i + 1, key: r.key, n: r.n, score: r.n < 2 ? `${formatNumber(r.meanScore.estimate)} [—]` : ci(r.meanScore), success: ci(r.successRate) })),
          [{ key: 'rank', align: 'right' }, { key: 'key', header: opts.by }, { key: 'n', align: 'right' }, { key: 'score', header: 'mean score [95% CI]' }, { key: 'success', header: 'success [95% Wilson]' }],
        ),
      );
    });

  reward
    .command('rubrics')
    .description("every rubric of each domain, layer by layer (the outcome, the rule layer's, the judge's), with their weights")
    .option('--domain <name>', 'one domain only')
    .option('--json', 'print JSON')
    .action((opts: { domain?: string; json?: boolean }) => {
      const profiles = opts.domain ? [getProfile(opts.domain)] : listProfiles();
      const rows = profiles.flatMap((p) => allRubrics(p).map((r) => ({ domain: p.name, ...r })));
      if (opts.json) return printJson(rows);
      console.log(formatTable(rows, [{ key: 'domain' }, { key: 'layer' }, { key: 'name', header: 'rubric' }, { key: 'weight', align: 'right' }, { key: 'source' }, { key: 'description' }]));
    });
}
