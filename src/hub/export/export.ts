import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { SchemaError } from '../../core/errors.js';
import { checkNewOutput, realPathOf } from '../../core/output-file.js';
import type { Trajectory } from '../../core/trajectory.js';
import { formatZodIssues } from '../../core/trajectory.js';
import { ExportError } from '../errors.js';
import { toBenchmarkRecords } from './benchmark.js';
import type { ToolLookup } from '../../core/chat/tool-lookup.js';
import { toDpoRecord, type TrajectoryPair } from './dpo.js';
import { writeHfDataset } from './hf.js';
import { selectTop } from './ranking.js';
import { groupByTask, meanStd, toRlRecord } from './rl.js';
import { RECORD_SCHEMAS, type DpoRecord, type ExportFormat, type RecordFormat } from './schemas.js';
import { filterTrajectories, passesFilters, splitByTask, trajectoryReward, type FilterOptions, type SplitShare } from './select.js';
import { toSftRecord } from './sft.js';
import { writeDirAtomic, writeJsonl } from './write.js';
import { defined } from '../../core/defined.js';

/**
 * `exportDataset`: trajectories → records of one format → files (docs/datasets.md).
 *
 * Steps: filter → (dedup) → `--top K` → records → split by task → validate every record against its
 * zod schema → write. What `--top` and the filters mean per format:
 * - sft, benchmark: filters and `--top K` (greedy quality, `ranking.ts`) apply to trajectories;
 * - rl: filters apply to trajectories; `--top K` keeps the K task groups with the largest reward
 *   standard deviation (the groups that carry a learning signal), ties by task id;
 * - dpo: pairs are built by `pairs` from the trajectories within `--max-steps`; `--success-only` and
 *   `--min-reward` then apply to the *chosen* side; `--top K` keeps the K pairs with the largest margin.
 */

/** Options of {@link exportDataset}. */
export interface ExportOptions {
  format: ExportFormat;
  /** For `hf`: the record format of the rows (default `sft`). */
  record?: RecordFormat;
  trajectories: readonly Trajectory[];
  /** Output file (one split) or directory (several splits, or `hf`). */
  out: string;
  filters?: FilterOptions;
  /** Split by task id; without it everything goes to `train`. */
  splits?: readonly SplitShare[];
  /** Keep the best K (see the module comment). */
  top?: number;
  /** Seed of the task split hash (default 0). */
  seed?: number;
  /** Drop trajectories whose id was already seen (sft, benchmark, rl). */
  dedup?: boolean;
  /** Tools of an environment, for the system prompt. */
  tools?: ToolLookup;
  /** DPO only: builds preference pairs from the (max-steps-filtered) trajectories. */
  pairs?: (trajectories: readonly Trajectory[]) => TrajectoryPair[];
  /**
   * Replace an existing output. Never one that is, or holds, an input or the working directory, nor anything
   * but a regular file or a directory (a device such as `/dev/stdout`, a socket).
   */
  force?: boolean;
  /** The files the trajectories were read from: an output that is one of them, or holds one, is refused. */
  inputs?: readonly string[];
  /**
   * Write a dataset with no records (default false: that is an error, and nothing is written, so a filter
   * that keeps nothing never replaces a good dataset with an empty one). The pipeline's export stage reports
   * an empty dataset itself.
   */
  allowEmpty?: boolean;
  /** Validate every record against its schema before writing (default true). */
  validate?: boolean;
  /** For the dataset card. */
  source?: string;
  /** `hf`: records per shard. */
  shardSize?: number;
}

/** What {@link exportDataset} wrote. */
export interface ExportReport {
  format: ExportFormat;
  record: RecordFormat;
  /** The output path (file or directory). */
  out: string;
  /** Files written (absolute paths). */
  files: string[];
  /** Records per split. */
  splits: Record<string, number>;
  /** Trajectories in. */
  input: number;
  /** Trajectories left after filters (and dedup). */
  kept: number;
  /** Records written in total. */
  records: number;
  /** DPO: pairs built; benchmark: tasks with no success (not exported). */
  notes: Record<string, number>;
}

interface Built {
  records: { task: string; record: unknown }[];
  kept: number;
  notes: Record<string, number>;
}

function buildSft(ts: readonly Trajectory[], o: ExportOptions): Built {
  const kept = prepare(ts, o);
  return { records: kept.map((t) => ({ task: t.task.id, record: toSftRecord(t, o.tools) })), kept: kept.length, notes: {} };
}

function buildBenchmark(ts: readonly Trajectory[], o: ExportOptions): Built {
  const kept = prepare(ts, o);
  const { records, unsolved } = toBenchmarkRecords(kept);
  return { records: records.map((r) => ({ task: r.task_id, record: r })), kept: kept.length, notes: { unsolvedTasks: unsolved } };
}

function buildRl(ts: readonly Trajectory[], o: ExportOptions): Built {
  const { top: _top, ...rest } = o;
  const kept = prepare(ts, rest);
  let groups = groupByTask(kept);
  if (o.top !== undefined) {
    groups = groups
      .map((g) => ({ g, std: meanStd(g.map(trajectoryReward)).std, id: (g[0] as Trajectory).task.id }))
      .sort((a, b) => b.std - a.std || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, o.top)
      .map((x) => x.g);
  }
  return { records: groups.map((g) => ({ task: (g[0] as Trajectory).task.id, record: toRlRecord(g, o.tools) })), kept: kept.length, notes: { groups: groups.length } };
}

function buildDpo(ts: readonly Trajectory[], o: ExportOptions): Built {
  if (!o.pairs) throw new ExportError('dpo export needs a pairing function (the CLI uses buildPreferences)');
  const f = o.filters ?? {};
  const pool = f.maxSteps === undefined ? [...ts] : ts.filter((t) => t.steps.length <= (f.maxSteps as number));
  const { maxSteps: _max, ...chosenFilters } = f;
  const pairs = o.pairs(pool).filter((p) => passesFilters(p.chosen, chosenFilters));
  let records = pairs.map((p) => toDpoRecord(p, o.tools)).filter((r): r is DpoRecord => r !== undefined);
  const identical = pairs.length - records.length;
  if (o.top !== undefined) {
    records = records
      .map((r, i) => ({ r, i }))
      .sort((a, b) => b.r.margin - a.r.margin || a.i - b.i)
      .slice(0, o.top)
      .sort((a, b) => a.i - b.i)
      .map((x) => x.r);
  }
  return { records: records.map((r) => ({ task: r.task_id, record: r })), kept: pool.length, notes: { pairs: pairs.length, identicalPairs: identical } };
}

/** Filters, dedups and applies `--top` (input order kept). */
function prepare(ts: readonly Trajectory[], o: Pick<ExportOptions, 'filters' | 'dedup' | 'top'>): Trajectory[] {
  let kept = filterTrajectories(ts, o.filters ?? {});
  if (o.dedup) {
    const seen = new Set<string>();
    kept = kept.filter((t) => (seen.has(t.id) ? false : (seen.add(t.id), true)));
  }
  if (o.top !== undefined) {
    const chosen = new Set(selectTop(kept, o.top).map((s) => s.index));
    kept = kept.filter((_, i) => chosen.has(i));
  }
  return kept;
}

function validateRecords(format: RecordFormat, records: readonly unknown[], split: string): void {
  const schema: z.ZodType = RECORD_SCHEMAS[format];
  const issues: string[] = [];
  records.forEach((r, i) => {
    const res = schema.safeParse(r);
    if (!res.success) issues.push(...formatZodIssues(res.error, `${format} record ${split}[${i}]`));
  });
  if (issues.length > 0) throw new SchemaError(issues.slice(0, 20).join('\n'), issues);
}

/**
 * Exports trajectories in one format (see the module comment and docs/datasets.md).
 *
 * @example
 * ```ts
 * await exportDataset({ format: 'sft', trajectories, out: 'sft.jsonl', filters: { successOnly: true } });
 * await exportDataset({ format: 'hf', record: 'sft', trajectories, out: 'hf-data', splits: parseSplitSpec('train=0.9,test=0.1') });
 * ```
 */
export async function exportDataset(o: ExportOptions): Promise<ExportReport> {
  const record: RecordFormat = o.format === 'hf' ? (o.record ?? 'sft') : o.format;
  if (o.top !== undefined && (!Number.isInteger(o.top) || o.top < 1)) throw new ExportError(`--top must be a positive integer, got ${o.top}`);
  // A trajectory without a step (its episode failed before the agent acted: a sandbox that never started, a
  // prompt over the model's context) has nothing to train on, and a record without an assistant turn is not
  // one the trainer takes: the training formats leave it out and count it (`notes.noSteps`).
  const trainable = record === 'benchmark' ? o.trajectories : o.trajectories.filter((t) => t.steps.length > 0);
  const built = { sft: buildSft, dpo: buildDpo, rl: buildRl, benchmark: buildBenchmark }[record](trainable, o);
  if (trainable.length < o.trajectories.length) built.notes['noSteps'] = o.trajectories.length - trainable.length;
  const shares = o.splits ?? [{ name: 'train', fraction: 1 }];
  const bySplit = splitByTask(built.records, (r) => r.task, shares, o.seed ?? 0);
  const splits = new Map([...bySplit.entries()].map(([s, rs]) => [s, rs.map((r) => r.record)] as const));
  if (o.validate ?? true) for (const [s, rs] of splits) validateRecords(record, rs, s);

  if (built.records.length === 0 && o.allowEmpty !== true) {
    const notes = Object.entries(built.notes).map(([k, n]) => `${k}=${n}`).join(' ');
    throw new ExportError(`nothing to export: ${o.trajectories.length} trajectories in, ${built.kept} kept by the filters, 0 ${record} records${notes ? ` (${notes})` : ''}; nothing was written`);
  }
  const toDirectory = o.format === 'hf' || o.splits !== undefined;
  if (o.out === '-') {
    if (toDirectory) throw new ExportError(`-o -: ${o.format === 'hf' ? 'an hf dataset' : 'a split export'} is a directory; only a single-file export can go to stdout`);
    await writeJsonl('-', splits.get('train') ?? []);
    return report(o, record, built, splits, '-', []);
  }
  // hf datasets and split exports are directories; the rest one file
  await guardOutput(o.out, o.inputs ?? [], o.force ?? false, o.format === 'hf' || o.splits !== undefined);
  const out = path.resolve(o.out);
  const files: string[] = [];
  if (o.format === 'hf') {
    await writeDirAtomic(out, o.force ?? false, async (dir) => {
      const written = await writeHfDataset(dir, splits, { record, ...defined({ source: o.source, shardSize: o.shardSize }) });
      files.push(...written.map((f) => path.join(out, f)));
    });
  } else if (o.splits !== undefined) {
    await writeDirAtomic(out, o.force ?? false, async (dir) => {
      for (const [s, rs] of splits) {
        await writeJsonl(path.join(dir, `${s}.jsonl`), rs);
        files.push(path.join(out, `${s}.jsonl`));
      }
    });
  } else {
    await writeJsonl(out, splits.get('train') ?? [], { replace: o.force ?? false });
    files.push(out);
  }
  return report(o, record, built, splits, out, files);
}

function report(
  o: ExportOptions,
  record: RecordFormat,
  built: { kept: number; records: readonly unknown[]; notes: Record<string, number> },
  splits: ReadonlyMap<string, readonly unknown[]>,
  out: string,
  files: string[],
): ExportReport {
  return {
    format: o.format,
    record,
    out,
    files,
    splits: Object.fromEntries([...splits.entries()].map(([s, rs]) => [s, rs.length])),
    input: o.trajectories.length,
    kept: built.kept,
    records: built.records.length,
    notes: built.notes,
  };
}

/**
 * Refuses an output that `--force` must not replace: one that is an input or holds one (a directory output
 * replaces the whole directory), and one that is or holds the working directory. Without `--force` an existing
 * output is refused anyway, and a device or fifo with it (core's `checkNewOutput`).
 */
async function guardOutput(out: string, inputs: readonly string[], force: boolean, directory: boolean): Promise<void> {
  await checkNewOutput(out, { force, directory });
  if (!force) return;
  const info = await stat(out).catch(() => undefined);
  if (info === undefined) return;
  const target = await realPathOf(out);
  const inside = (p: string): boolean => p === target || p.startsWith(target.endsWith(path.sep) ? target : `${target}${path.sep}`);
  for (const input of inputs) {
    if (inside(await realPathOf(input))) throw new ExportError(`output ${out} ${info.isDirectory() ? 'holds' : 'is'} the input ${input}; --force would delete it (choose another output)`);
  }
  if (info.isDirectory() && inside(await realPathOf(process.cwd()))) throw new ExportError(`output ${out} is or holds the working directory; --force would delete it (choose another output)`);
}
