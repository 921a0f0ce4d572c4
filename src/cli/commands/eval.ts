import { InvalidArgumentError, type Command } from 'commander';
import { defined } from '../../core/defined.js';
import { ConfigError } from '../../core/errors.js';
import { checkNewOutput, realPathOf, writeFileAtomically } from '../../core/output-file.js';
import { make, spec } from '../../core/registry.js';
import type { Split, TaskInfo } from '../../core/types.js';
import { assertMetadataField, successBy, type BreakdownRow } from '../../eval/breakdown.js';
import { evaluate } from '../../eval/evaluate.js';
import { formatCalibration, formatInterval, formatPassK, formatValue, passKHeading } from '../../eval/format.js';
import { toMarkdown } from '../../eval/markdown.js';
import { EVAL_METRICS } from '../../eval/metrics.js';
import type { EvalResult } from '../../eval/result.js';
import { resolveAgent } from '../../policy/specs.js';
import { checkedEnvKwargs, parseInteger, parseKwargs, parsePositiveInteger, printJson, withEnvKwargsOptions, type EnvKwargsOpts } from '../options.js';
import { formatTable } from '../table.js';
import { BENCHMARKS, parseIdList, runSweBench, type SweBenchOpts } from './eval-swe-bench.js';
import { openStore, withStoreOption } from './store.js';

interface EvalOpts extends EnvKwargsOpts, Omit<SweBenchOpts, 'agent'> {
  env?: string;
  agent?: string;
  benchmark?: (typeof BENCHMARKS)[number];
  split: Split;
  episodes: number;
  trials: number;
  seed: number;
  concurrency: number;
  resamples: number;
  confidence: number;
  calibrationBins: number;
  out?: string;
  markdown?: string;
  save?: string;
  store?: string;
  json?: boolean;
  by?: string;
  force?: boolean;
}

/** Commander parser for `--benchmark`. */
function parseBenchmark(value: string): (typeof BENCHMARKS)[number] {
  const known = BENCHMARKS.find((b) => b === value);
  if (known === undefined) throw new InvalidArgumentError(`expected one of ${BENCHMARKS.join(', ')}, got '${value}'`);
  return known;
}

/** Commander parser for `--split`: `train` or `heldout`. */
export function parseSplit(value: string): Split {
  if (value === 'train' || value === 'heldout') return value;
  throw new InvalidArgumentError(`expected train or heldout, got '${value}'`);
}

/** Commander parser for a probability strictly between 0 and 1 (`--confidence`, `--alpha`). */
export function parseOpenUnit(value: string): number {
  const v = Number(value);
  if (value.trim() === '' || !(v > 0 && v < 1)) throw new InvalidArgumentError(`expected a number between 0 and 1 (exclusive), got '${value}'`);
  return v;
}

/**
 * `gymflow eval`: evaluates an agent on an environment split — n seeded episodes (times `--trials`), each
 * metric with a bootstrap confidence interval (success also Wilson; pass^k with trials) — and prints a table,
 * JSON or Markdown.
 */
export function evalCommand(program: Command): void {
  withEnvKwargsOptions(withStoreOption(program.command('eval')))
    .description('evaluate an agent: n seeded episodes on held-out tasks, metrics with confidence intervals')
    .option('--env <id>', 'environment id, e.g. gymflow/tool-use-v0 (required unless --benchmark)')
    .option('--agent <spec>', 'agent spec: expert | random | … (required unless --benchmark with --predictions)')
    .option('--split <split>', 'task split: heldout | train', parseSplit, 'heldout')
    .option('-n, --episodes <n>', 'number of episodes of one trial (task i = tasks[i mod #tasks])', parsePositiveInteger, 50)
    .option('--trials <k>', "run the episodes' tasks k times, each episode with its own seed, and report pass^1..pass^k", parsePositiveInteger, 1)
    .option('--seed <n>', 'seed of the episode seeds and the bootstrap', parseInteger, 0)
    .option('--concurrency <k>', 'episodes run at once', parsePositiveInteger, 4)
    .option('--resamples <b>', 'bootstrap resamples', parsePositiveInteger, 2000)
    .option('--confidence <c>', 'interval coverage', parseOpenUnit, 0.95)
    .option('--calibration-bins <n>', "answers per bin of the calibration error, when the env reads stated confidences (gymflow/qa-v0); HLE's is 100", parsePositiveInteger, 100)
    .option('--out <file>', 'write the result JSON (the input of `gymflow compare`) to this file')
    .option('--markdown <file>', 'write the Markdown report to this file')
    .option('--save <name>', 'store the result as an `eval` artifact under this ref name (`gymflow compare` reads names too)')
    .option('--force', 'replace an existing --out or --markdown file, or move an existing --save name (by default each is an error)')
    .option('--json', 'print the result JSON instead of a table')
    .option('--by <field>', 'also print success per value of this task metadata field (e.g. kind; tool-use: answerInTrain)')
    .option('--benchmark <name>', `grade a benchmark by its own harness instead of running episodes: ${BENCHMARKS.join(', ')} (docs/evaluation.md)`, parseBenchmark)
    .option('--instances <file>', '--benchmark swe-bench: the SWE-bench instances (JSON lines or a JSON array)')
    .option('--predictions <file>', '--benchmark swe-bench: predictions made elsewhere (instance_id, model_name_or_path, model_patch); or --agent')
    .option('--repos <dir>', '--benchmark swe-bench: directory of the repositories (bare or not: owner__name.git, …); else fetched from --repo-url')
    .option('--repo-url <template>', "--benchmark swe-bench: Git URL of a repository not in --repos, {repo} = owner/name (default https://github.com/{repo}.git; 'none': never fetch)")
    .option('--specs <file>', '--benchmark swe-bench: spec table (YAML/JSON: repo → version → python, env_setup, pre_install, install, test_cmd, log_parser, …)')
    .option('--base-image <ref>', '--benchmark swe-bench: the image environment layers are built on (default gymflow/sandbox:latest)')
    .option('--instance-ids <ids>', '--benchmark swe-bench: only these instances (comma-separated)', parseIdList)
    .option('--timeout <s>', '--benchmark swe-bench: time limit of one test run, seconds', parsePositiveInteger, 1800)
    .option('--sandbox <json>', '--benchmark swe-bench: sandbox config overrides of the containers, e.g. \'{"workDirMiB": 2048, "memoryMiB": 4096}\' for large repositories', parseKwargs)
    .option('--log-dir <dir>', "--benchmark swe-bench: write each instance's patch.diff, report.json and test_output.txt under DIR/<model>/<instance>/")
    .option('--save-predictions <file>', "--benchmark swe-bench --agent: write the agent's predictions (JSON lines) to this file")
    .action(async (opts: EvalOpts, cmd: Command) => {
      if (opts.benchmark !== undefined) {
        if (opts.env !== undefined) throw new ConfigError('--benchmark and --env: a benchmark names its own environment (give one of them)');
        return runSweBench(opts);
      }
      if (opts.env === undefined) return cmd.error("error: required option '--env <id>' not specified");
      if (opts.agent === undefined) return cmd.error("error: required option '--agent <spec>' not specified");
      const envId = opts.env;
      const agent = opts.agent;
      spec(envId); // fails early with the list of registered ids
      const envKwargs = await checkedEnvKwargs(envId, opts);
      const by = opts.by === undefined ? undefined : { field: opts.by, tasks: await splitTasks(envId, envKwargs, opts.split) };
      if (by) assertMetadataField(by.tasks, by.field); // before the episodes run
      // The outputs and the name too, none replacing an earlier result unless forced: the episodes may take
      // hours, or cost money.
      const force = opts.force === true;
      if (opts.out !== undefined && opts.markdown !== undefined && (await realPathOf(opts.out)) === (await realPathOf(opts.markdown))) {
        throw new ConfigError(`--out and --markdown are both ${opts.out}: the report would replace the result (give two files)`);
      }
      for (const file of [opts.out, opts.markdown]) if (file !== undefined) await checkNewOutput(file, { force });
      const store = opts.save === undefined ? undefined : await openStore(opts, true);
      if (store !== undefined && opts.save !== undefined) await store.checkNewName(opts.save, { force });
      const result = await evaluate({
        envId,
        ...defined({ envKwargs }),
        agent,
        resolveAgent,
        split: opts.split,
        n: opts.episodes,
        trials: opts.trials,
        seed: opts.seed,
        concurrency: opts.concurrency,
        resamples: opts.resamples,
        confidence: opts.confidence,
        calibrationBinSize: opts.calibrationBins,
      });
      if (opts.out) await writeFileAtomically(opts.out, `${JSON.stringify(result, null, 2)}\n`, { replace: force });
      const saved = store !== undefined && opts.save !== undefined ? await store.putJson(result, { kind: 'eval', name: opts.save }) : undefined;
      if (opts.markdown) await writeFileAtomically(opts.markdown, toMarkdown(result), { replace: force });
      const breakdown = by && { field: by.field, rows: successBy(result.episodes, by.tasks, by.field, result.confidence) };
      if (opts.json) return printJson(breakdown ? { ...result, breakdown } : result);
      console.log(formatEvalTable(result));
      if (breakdown) console.log(`\n${formatBreakdownTable(breakdown.field, breakdown.rows, result.confidence)}`);
      if (opts.out) console.log(`result written to ${opts.out}`);
      if (opts.markdown) console.log(`markdown written to ${opts.markdown}`);
      if (saved) console.log(`result stored as ${saved.ref} (${opts.save})`);
    });
}

/** The tasks of an environment's split, for `--by`; a ConfigError when the environment cannot list them. */
async function splitTasks(envId: string, kwargs: Record<string, unknown> | undefined, split: Split): Promise<TaskInfo[]> {
  const env = make(envId, defined({ kwargs }));
  try {
    const tasks = env.listTasks?.(split);
    if (tasks === undefined) throw new ConfigError(`--by: ${envId} cannot list its tasks, so it has no task metadata to break down by`);
    return tasks;
  } finally {
    await env.close();
  }
}

/** The `--by` table: one row per value, success with its Wilson interval. */
export function formatBreakdownTable(field: string, rows: readonly BreakdownRow[], confidence: number): string {
  const pct = Math.round(confidence * 100);
  const body = rows.map((r) => ({ value: r.value, success: `${r.successes}/${r.n}`, rate: formatValue(r.success.estimate), ci: formatInterval(r.success) }));
  return formatTable(body, [{ key: 'value', header: field }, { key: 'success', align: 'right' }, { key: 'rate', align: 'right' }, { key: 'ci', header: `Wilson ${pct}%` }]);
}

/** The terminal summary of an evaluation: a header line, one row per metric, success with Wilson, pass^k with trials. */
export function formatEvalTable(result: EvalResult): string {
  const pct = Math.round(result.confidence * 100);
  const rows = EVAL_METRICS.map((m) => {
    const s = result.metrics[m];
    return { metric: m, mean: formatValue(s.mean, m === 'costUsd' ? 4 : 3), sd: formatValue(s.sd), ci: formatInterval(s.ci), n: s.n };
  });
  const success = result.metrics.success;
  const passK = passKHeading(result);
  const trials = result.trials === undefined ? '' : ` trials=${result.trials}`;
  const kwargs = result.envKwargs === undefined ? '' : ` kwargs=${JSON.stringify(result.envKwargs)}`;
  return [
    `${result.envId}${kwargs} agent=${result.agent} split=${result.split} episodes=${result.n} tasks=${result.tasks}${trials} seed=${result.seed}`,
    formatTable(rows, [
      { key: 'metric' },
      { key: 'mean', align: 'right' },
      { key: 'sd', align: 'right' },
      { key: 'ci', header: `${pct}% CI (bootstrap)` },
      { key: 'n', align: 'right' },
    ]),
    `success ${success.successes}/${success.n}, Wilson ${pct}% ${formatInterval(success.wilson)}`,
    ...(passK !== undefined && result.passK ? [`${passK}: ${formatPassK(result.passK)}`] : []),
    ...(result.calibration ? [`calibration: ${formatCalibration(result.calibration)}`] : []),
    ...(result.notes ?? []).map((n) => `note: ${n}`),
  ].join('\n');
}
