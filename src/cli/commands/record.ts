import type { Command } from 'commander';
import { ConfigError } from '../../core/errors.js';
import { assertNotAnInput, checkNewOutput } from '../../core/output-file.js';
import type { Trajectory } from '../../core/trajectory.js';
import { trajectoryJsonSchema } from '../../core/trajectory.js';
import type { ConversionProblem } from '../../recorder/adapter.js';
import { formatProblem, isConversionProblem } from '../../recorder/adapter.js';
import { convertFile, convertPath } from '../../recorder/convert.js';
import { detectFormat } from '../../recorder/detect.js';
import { diffTrajectories, formatDiff } from '../../recorder/diff.js';
import { adapterNames } from '../../recorder/registry.js';
import { formatValidationReport, validateLog } from '../../recorder/validate.js';
import { defined } from '../../core/defined.js';
import { processLogs } from '../process-logs.js';
import { loadScoring } from './reward.js';
import { writeJsonl } from '../../recorder/write.js';
import { parseInteger, parsePositiveInteger, printJson } from '../options.js';

/** `gymflow record …`: the trajectory format, and conversion of real agent logs into it. */
export function recordCommand(program: Command): Command {
  const record = program.command('record').description('the standard trajectory format and agent-log conversion');

  record
    .command('schema')
    .description('print the JSON Schema of a trajectory (one JSON object per line in .jsonl files)')
    .action(() => printJson(trajectoryJsonSchema()));

  record
    .command('detect <file>')
    .description(`detect an agent log's format (${adapterNames().join(', ')})`)
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { json?: boolean }) => {
      const d = await detectFormat(file).catch((err: unknown) => {
        throw new ConfigError(`${file}: cannot read (${(err as Error).message})`);
      });
      if (opts.json) return printJson({ file, format: d.adapter?.name ?? null, confidence: d.confidence, candidates: d.candidates });
      if (!d.adapter) throw new ConfigError(`${file}: format not recognised (candidates: ${d.candidates.map((c) => `${c.name} ${c.confidence}`).join(', ') || 'none'})`);
      console.log(`${file}: ${d.adapter.name} (confidence ${d.confidence})`);
    });

  record
    .command('convert <path>')
    .description('convert an agent log (a file or a directory, recursively) into trajectories, streaming')
    .requiredOption('-o, --out <file>', "output JSONL file ('-' for stdout); written atomically, and left as it was when nothing converts")
    .option('--format <name>', `force an adapter: ${adapterNames().join(', ')}`)
    .option('--model <name>', 'model name for logs that do not record it')
    .option('--force', 'replace an existing -o file (by default an error)')
    .action(async (path: string, opts: { out: string; format?: string; model?: string; force?: boolean }) => {
      checkFormat(opts.format);
      let errors = 0;
      const onProblem = (p: ConversionProblem): void => {
        if (p.severity === 'error') errors += 1;
        console.error(formatProblem(p));
      };
      await assertNotAnInput(opts.out, [path]);
      await checkNewOutput(opts.out, { force: opts.force === true, stdout: true });
      const options = { ...(opts.format ? { format: opts.format } : {}), ...(opts.model ? { model: opts.model } : {}) };
      // The output may lie inside the directory converted: the walk leaves it out.
      const items = convertPath(path, options, { exclude: opts.out === '-' ? [] : [opts.out] });
      const summary = await writeJsonl(items, opts.out, { onProblem, keepWhenEmpty: true, replace: opts.force === true });
      const where = opts.out === '-' ? '' : summary.committed ? ` to ${opts.out}` : `; nothing written to ${opts.out}`;
      console.error(`converted ${summary.written} trajectories from ${path}${where}; ${summary.problems} problem(s), ${errors} error(s)`);
      if (errors > 0 || summary.written === 0) process.exitCode = 1;
    });

  record
    .command('validate <path>')
    .description('validate a trajectory JSONL file, or an agent log against its format (detected, or --format): every problem with file, line and JSON path')
    .option('--format <name>', `check against this format: ${adapterNames().join(', ')}`)
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { format?: string; json?: boolean }) => {
      checkFormat(opts.format);
      const report = await validateLog(file, defined({ format: opts.format }));
      if (opts.json) printJson(report);
      else {
        for (const line of formatValidationReport(report)) console.error(line);
        const what = report.format === 'gymflow' ? 'valid trajectories' : `${report.format ?? 'agent-log'} trajectories converted`;
        console.log(`${file}: ${report.valid}/${report.records} ${what}, ${report.problems.length} problem(s)`);
      }
      if (report.problems.some((p) => p.severity === 'error')) process.exitCode = 1;
    });

  record
    .command('process <path>')
    .description('convert an agent log (a file or a directory), validate and score its trajectories in one pass (rule layer; calibration when given)')
    .requiredOption('--domain <name>', 'domain profile whose rubric weights apply (gymflow profiles); required')
    .requiredOption('-o, --out <file>', 'scored JSONL, written atomically; left as it was when nothing converts')
    .option('--format <name>', `force an adapter: ${adapterNames().join(', ')}`)
    .option('--model <name>', 'model name for logs that do not record it')
    .option('--calibration <file>', 'apply a calibration fitted by `gymflow reward calibrate`')
    .option('--reference-steps <n>', 'reference solution length for the efficiency rule (default: the profile step budget)', parsePositiveInteger)
    .option('--force', 'replace an existing -o file (by default an error)')
    .option('--json', 'print the summary as JSON')
    .action(async (path: string, opts: { domain: string; out: string; format?: string; model?: string; calibration?: string; referenceSteps?: number; force?: boolean; json?: boolean }) => {
      checkFormat(opts.format);
      await assertNotAnInput(opts.out, [path]);
      await checkNewOutput(opts.out, { force: opts.force === true });
      const scoring = await loadScoring({ domain: opts.domain, ...defined({ calibration: opts.calibration, referenceSteps: opts.referenceSteps }) });
      const summary = await processLogs(path, opts.out, { convert: defined({ format: opts.format, model: opts.model }), score: scoring.options, replace: opts.force === true }).finally(() => scoring.release());
      if (opts.json) printJson(summary);
      else {
        for (const p of summary.problems) console.error(formatProblem(p));
        const where = summary.written ? ` into ${opts.out}` : `; nothing written to ${opts.out}`;
        console.log(`scored ${summary.scored} trajectories from ${path}${where} (mean reward ${summary.meanReward === null ? '-' : summary.meanReward.toFixed(3)}); ${summary.problems.length} problem(s), ${summary.errors} error(s)`);
      }
      if (summary.errors > 0 || summary.scored === 0) process.exitCode = 1;
    });

  record
    .command('diff <a> <b>')
    .description('compare two trajectories (any supported log format): steps, tools, outcome, first divergent step')
    .option('--index-a <n>', 'which trajectory of file A (0-based)', parseInteger, 0)
    .option('--index-b <n>', 'which trajectory of file B (0-based)', parseInteger, 0)
    .option('--json', 'print JSON')
    .action(async (a: string, b: string, opts: { indexA: number; indexB: number; json?: boolean }) => {
      const [ta, tb] = await Promise.all([nthTrajectory(a, opts.indexA), nthTrajectory(b, opts.indexB)]);
      const diff = diffTrajectories(ta, tb);
      if (opts.json) return printJson(diff);
      for (const line of formatDiff(diff)) console.log(line);
    });

  return record;
}

/** Problems quoted in full when a file has no trajectory at the index asked for. */
const DIFF_PROBLEMS_SHOWN = 5;

/** A `--format` that no adapter has is an error naming the known ones. */
export function checkFormat(format: string | undefined, flag = '--format'): void {
  if (format !== undefined && !adapterNames().includes(format)) throw new ConfigError(`${flag} ${format}: unknown format; known: ${adapterNames().join(', ')}`);
}

/**
 * The trajectory at `index` (0-based) of a file in any supported log format (a trajectory JSONL file too).
 *
 * @throws ConfigError naming the file, how many trajectories it has and its first problems, when there is none there.
 */
export async function nthTrajectory(file: string, index: number): Promise<Trajectory> {
  let i = 0;
  const problems: ConversionProblem[] = [];
  for await (const item of convertFile(file)) {
    if (isConversionProblem(item)) {
      problems.push(item);
      continue;
    }
    if (i === index) return item;
    i += 1;
  }
  const shown = problems.slice(0, DIFF_PROBLEMS_SHOWN).map((p) => `\n  ${formatProblem(p)}`);
  const more = problems.length > shown.length ? `\n  … and ${problems.length - shown.length} more` : '';
  throw new ConfigError(`${file}: has ${i} trajectories, no trajectory at index ${index}${problems.length > 0 ? `; ${problems.length} problem(s):` : ''}${shown.join('')}${more}`);
}
