import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { registryToolLookup } from '../../core/chat/tool-lookup.js';
import type { Trajectory } from '../../core/trajectory.js';
import { ExportError } from '../../hub/errors.js';
import { resolvePairs } from '../../hub/export/dpo.js';
import { exportDataset, type ExportOptions, type ExportReport } from '../../hub/export/export.js';
import { loadTrajectoriesFrom } from '../../hub/export/input.js';
import { EXPORT_FORMATS, RECORD_FORMATS, type ExportFormat, type RecordFormat } from '../../hub/export/schemas.js';
import { parseSplitSpec } from '../../hub/export/select.js';
import type { ArtifactStore } from '../../hub/store/store.js';
import { putTree } from '../../hub/store/tree.js';
import { buildPreferences } from '../../reward/preferences.js';
import { parseInteger, parsePositiveInteger, printJson } from '../options.js';
import { openStore, withStoreOption } from './store.js';
import { defined } from '../../core/defined.js';

/** The options of `gymflow export` (and of {@link runExport}). */
export interface ExportOpts {
  format: ExportFormat;
  record?: RecordFormat;
  in: string[];
  out: string;
  successOnly?: boolean;
  minReward?: number;
  maxSteps?: number;
  splitByTask?: string;
  top?: number;
  seed: number;
  dedup?: boolean;
  minMargin: number;
  maxPairsPerTask?: number;
  shardSize?: number;
  force?: boolean;
  name?: string;
  store?: string;
  json?: boolean;
}

function parseChoice<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${choices.join(', ')}, got '${value}'`);
    return value as T;
  };
}

function parseNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a number, got '${value}'`);
  return n;
}

async function isFile(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isFile();
  } catch {
    return false;
  }
}

/** What {@link runExport} did: the report, and the ref of the stored dataset (with `name`). */
export interface ExportRun {
  report: ExportReport;
  ref: string | undefined;
}

/**
 * `gymflow export`'s work (the MCP tool `export_dataset` runs it too): reads the inputs (files, or store refs and
 * names), builds DPO pairs when asked, writes the dataset, and stores it under `name` when given.
 */
export async function runExport(opts: Omit<ExportOpts, 'json'>): Promise<ExportRun> {
  if (opts.record !== undefined && opts.format !== 'hf') throw new ExportError('--record is only for --format hf (the other formats are their own record format)');
  const areFiles = await Promise.all(opts.in.map(isFile));
  const needsStore = opts.name !== undefined || !areFiles.every(Boolean);
  const store: ArtifactStore | undefined = needsStore
    ? await openStore(opts, opts.name !== undefined).catch((err: unknown) => {
        // Most often a mistyped file name, which was then looked up as a ref name.
        const spec = opts.in[areFiles.indexOf(false)];
        throw spec === undefined ? err : new ExportError(`--in ${spec}: not a file, and not a ref in a store (${(err as Error).message})`);
      })
    : undefined;
  // The name, like the output, replaces nothing unless forced; checked before the inputs are stored.
  if (store && opts.name !== undefined) await store.checkNewName(opts.name, { force: opts.force === true });
  const trajectories: Trajectory[] = [];
  const parents: string[] = [];
  const sources: string[] = [];
  const files: string[] = [];
  for (const spec of opts.in) {
    const { trajectories: ts, source } = await loadTrajectoriesFrom(spec, store);
    trajectories.push(...ts);
    sources.push(source.kind === 'ref' ? source.ref : source.path);
    if (source.kind === 'file') files.push(source.path);
    if (source.kind === 'ref') parents.push(source.ref);
    else if (store && opts.name !== undefined) parents.push((await store.putFile(source.path, { kind: 'trajectories' })).ref);
  }
  const filters = {
    ...(opts.successOnly ? { successOnly: true } : {}),
    ...defined({ minReward: opts.minReward, maxSteps: opts.maxSteps }),
  };
  const options: ExportOptions = {
    format: opts.format,
    trajectories,
    out: opts.out,
    inputs: files,
    filters,
    seed: opts.seed,
    tools: registryToolLookup(),
    source: sources.join(', '),
    ...defined({ record: opts.record, splits: opts.splitByTask === undefined ? undefined : parseSplitSpec(opts.splitByTask), top: opts.top }),
    ...(opts.dedup ? { dedup: true } : {}),
    ...(opts.force ? { force: true } : {}),
    ...defined({ shardSize: opts.shardSize }),
    pairs: (ts) =>
      resolvePairs(
        ts,
        buildPreferences(ts, { minMargin: opts.minMargin, ...defined({ maxPairsPerTask: opts.maxPairsPerTask }) }).pairs,
      ),
  };
  const report = await exportDataset(options);
  let stored: string | undefined;
  if (store && opts.name !== undefined) {
    const put = { kind: 'dataset', parents, name: opts.name, meta: { format: report.format, record: report.record, splits: report.splits } };
    const entry = (await isFile(report.out)) ? await store.putFile(report.out, put) : await putTree(store, report.out, put);
    stored = entry.ref;
  }
  return { report, ref: stored };
}

/**
 * `gymflow export`: trajectories (JSONL files or store refs) → an SFT, DPO, RL, benchmark or Hugging
 * Face dataset. For `dpo` the command first builds preference pairs with the reward layer's
 * `buildPreferences` (`--min-margin`, `--max-pairs-per-task`), then renders them.
 */
export function exportCommand(program: Command): void {
  withStoreOption(program.command('export'))
    .description('export trajectories as a training dataset (see docs/datasets.md)')
    .requiredOption('--format <format>', `one of ${EXPORT_FORMATS.join(', ')}`, parseChoice(EXPORT_FORMATS))
    .requiredOption('--in <file|ref...>', 'JSONL files of trajectories, or store refs / ref names')
    .requiredOption('-o, --out <path>', 'output file; a directory with --split-by-task or --format hf')
    .option('--record <format>', `hf only: the row format (${RECORD_FORMATS.join(', ')})`, parseChoice(RECORD_FORMATS))
    .option('--success-only', 'keep successful trajectories only (dpo: the chosen side)')
    .option('--min-reward <x>', 'keep trajectories whose reward (reward.total, else outcome.score) is ≥ x (dpo: the chosen side)', parseNumber)
    .option('--max-steps <n>', 'keep trajectories with at most n steps', parsePositiveInteger)
    .option('--split-by-task <spec>', 'split by task id, e.g. train=0.8,validation=0.1,test=0.1')
    .option('--top <k>', 'keep the best k (sft/benchmark: quality ranking; rl: groups with most reward variance; dpo: largest margins)', parsePositiveInteger)
    .option('--seed <s>', 'seed of the task split hash', parseInteger, 0)
    .option('--dedup', 'drop repeated trajectories (same content id)')
    .option('--min-margin <x>', 'dpo: smallest reward difference that makes a pair', parseNumber, 0.1)
    .option('--max-pairs-per-task <n>', 'dpo: at most n pairs per task, largest margins kept (default: no cap)', parsePositiveInteger)
    .option('--shard-size <n>', 'hf: rows per shard', parsePositiveInteger)
    .option('--force', 'replace an existing output, and move an existing --name (by default either is an error)')
    .option('--name <name>', 'also store the output as a dataset artifact under this ref name, a new one unless --force (lineage: its inputs)')
    .option('--json', 'print the report as JSON')
    .action(async (opts: ExportOpts) => {
      const { report, ref: stored } = await runExport(opts);
      if (opts.json) return printJson({ ...report, ref: stored ?? null });
      const splits = Object.entries(report.splits)
        .map(([s, n]) => `${s}=${n}`)
        .join(' ');
      const notes = Object.entries(report.notes)
        .map(([k, n]) => `${k}=${n}`)
        .join(' ');
      // With `-o -` the records are stdout, so the summary goes to stderr.
      const say = report.out === '-' ? console.error : console.log;
      say(`${report.format}${report.format === 'hf' ? `(${report.record})` : ''}: ${report.input} trajectories in, ${report.kept} kept, ${report.records} records (${splits})${notes ? `; ${notes}` : ''}`);
      say(`wrote ${report.out === '-' ? 'stdout' : report.out}${stored ? `; stored ${stored} as ${opts.name}` : ''}`);
    });
}
