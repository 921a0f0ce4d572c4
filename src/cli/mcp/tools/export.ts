/**
 * The dataset export tool: `gymflow export`'s function.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { EXPORT_FORMATS, RECORD_FORMATS } from '../../../hub/export/schemas.js';
import { STORE_ENV_VAR } from '../../../hub/store/layout.js';
import { runExport } from '../../commands/export.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../context.js';
import { relativePath } from './fields.js';
import { defined } from '../../../core/defined.js';

/** The artifact store of a call: the one named, else `$GYMFLOW_STORE`, else `.gymflow/store` under the root; confined. */
export async function storeOf(ctx: ToolContext, given: string | undefined): Promise<string> {
  if (given !== undefined) return ctx.root.directory(given, 'store');
  const fromEnv = process.env[STORE_ENV_VAR];
  if (fromEnv) return ctx.root.directory(fromEnv, `$${STORE_ENV_VAR}`);
  // `.gymflow` is made when missing (a link there that leads out is still refused).
  await mkdir(join(ctx.root.dir, '.gymflow'), { recursive: true });
  return ctx.root.directory(join('.gymflow', 'store'), 'store');
}

/** The export tool. */
export function exportTools(): ToolDefinition[] {
  return [
    defineTool({
      name: 'export_dataset',
      title: 'Export a training dataset',
      description:
        'Exports trajectories as a training dataset: sft (chat messages with a per-turn train mask), dpo (chosen/rejected pairs built by reward margin), rl (prompts with groups), benchmark (tasks with their best solution), or hf (a directory `datasets.load_dataset(dir)` reads: JSONL shards and a dataset card; record picks the row format). ' +
        'Filters: success_only, min_reward, max_steps, dedup, top; split_by_task splits by task id (out is then a directory). With name, the dataset is also stored in the artifact store under that ref name (lineage: its inputs). Returns the report: records per split, kept, files written.',
      input: z
        .object({
          format: z.enum(EXPORT_FORMATS).describe(`one of ${EXPORT_FORMATS.join(', ')}`),
          in: z.array(z.string().min(1)).min(1).describe('trajectory JSONL files under the root, or store refs / ref names'),
          out: relativePath.describe('the output file; a directory with split_by_task or format hf'),
          record: z.enum(RECORD_FORMATS).optional().describe('hf only: the row format'),
          success_only: z.boolean().default(false).describe('keep successful trajectories only (dpo: the chosen side)'),
          min_reward: z.number().optional().describe('keep trajectories whose reward (reward.total, else outcome.score) is at least this'),
          max_steps: z.number().int().positive().optional().describe('keep trajectories with at most this many steps'),
          split_by_task: z.string().min(1).optional().describe('split by task id, e.g. train=0.8,validation=0.1,test=0.1'),
          top: z.number().int().positive().optional().describe('keep the best k (sft/benchmark: quality; rl: groups with most reward variance; dpo: largest margins)'),
          seed: z.number().int().default(0).describe('seed of the task split hash'),
          dedup: z.boolean().default(false).describe('drop repeated trajectories (same content id)'),
          min_margin: z.number().default(0.1).describe('dpo: smallest reward difference that makes a pair'),
          max_pairs_per_task: z.number().int().positive().optional().describe('dpo: at most this many pairs per task'),
          shard_size: z.number().int().positive().optional().describe('hf: rows per shard'),
          name: z.string().min(1).optional().describe('also store the dataset under this ref name'),
          store: relativePath.optional().describe('the artifact store directory (default: $GYMFLOW_STORE, else .gymflow/store under the root)'),
          force: z.boolean().default(false).describe('replace an existing out, and move an existing name'),
        })
        .strict(),
      annotations: { readOnlyHint: false, openWorldHint: false },
      async run(args, { ctx }) {
        const inputs = await Promise.all(args.in.map((spec, i) => ctx.root.inputOrName(spec, `in[${i}]`)));
        const out = await ctx.root.output(args.out, 'out');
        const store = await storeOf(ctx, args.store);
        const { report, ref } = await runExport({
          format: args.format,
          in: inputs,
          out,
          seed: args.seed,
          minMargin: args.min_margin,
          store,
          ...defined({ record: args.record }),
          ...(args.success_only ? { successOnly: true } : {}),
          ...defined({ minReward: args.min_reward, maxSteps: args.max_steps, splitByTask: args.split_by_task, top: args.top }),
          ...(args.dedup ? { dedup: true } : {}),
          ...defined({ maxPairsPerTask: args.max_pairs_per_task, shardSize: args.shard_size, name: args.name }),
          ...(args.force ? { force: true } : {}),
        });
        const splits = Object.entries(report.splits)
          .map(([s, n]) => `${s}=${n}`)
          .join(' ');
        return {
          summary: `${report.format}: ${report.input} trajectories in, ${report.kept} kept, ${report.records} records (${splits}) in ${ctx.root.show(report.out)}${ref ? `; stored ${ref} as ${args.name}` : ''}`,
          data: { ...report, out: ctx.root.show(report.out), files: report.files.map((f) => ctx.root.show(f)), ref: ref ?? null },
        };
      },
    }),
  ];
}
