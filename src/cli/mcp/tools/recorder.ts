/**
 * Recorder tools: agent logs to standard trajectories, validation, the trajectory schema, trajectory diffs. Each is
 * `gymflow record …`'s function.
 */
import { z } from 'zod';
import { GymflowError } from '../../../core/errors.js';
import { trajectoryJsonSchema } from '../../../core/trajectory.js';
import type { ConversionItem, ConversionProblem } from '../../../recorder/adapter.js';
import { isConversionProblem } from '../../../recorder/adapter.js';
import { convertPath } from '../../../recorder/convert.js';
import { diffTrajectories } from '../../../recorder/diff.js';
import { adapterNames } from '../../../recorder/registry.js';
import { validateLog } from '../../../recorder/validate.js';
import { writeJsonl } from '../../../recorder/write.js';
import { checkNewOutput } from '../../../core/output-file.js';
import { checkFormat, nthTrajectory } from '../../commands/record.js';
import { defineTool, resultFile, type ToolContext, type ToolDefinition } from '../context.js';
import { LIST_SHOWN, relativePath } from './fields.js';
import { defined } from '../../../core/defined.js';

/** A conversion problem with its file shown relative to the root. */
export function shownProblem(ctx: ToolContext, p: ConversionProblem): Record<string, unknown> {
  return { severity: p.severity, file: ctx.root.show(p.file), ...defined({ line: p.line }), path: p.path, message: p.message };
}

/** The `format` argument: an adapter's name. */
export function formatField(): z.ZodOptional<z.ZodString> {
  return z
    .string()
    .min(1)
    .optional()
    .describe(`the log format (default: detected per file): ${adapterNames().join(', ')}`);
}

/** The recorder tools. */
export function recorderTools(): ToolDefinition[] {
  return [
    defineTool({
      name: 'convert_logs',
      title: 'Convert agent logs to trajectories',
      description:
        `Converts agent logs — one file, or every file under a directory — into standard gymflow trajectories (JSONL, one per line), the format detected per file or forced. Formats: ${adapterNames().join(', ')}. ` +
        'Writes the trajectories to out (atomically; an existing file only with force; nothing when none converts) and returns the count and every problem met (file, line, JSON path, message). Reports progress per trajectory.',
      input: z
        .object({
          path: relativePath.describe('an agent log file, or a directory of them, under the workspace root'),
          out: relativePath.optional().describe('the JSONL file to write under the root; default: a new file in .gymflow/mcp/'),
          format: formatField(),
          model: z.string().min(1).optional().describe('the model name for logs that do not record one'),
          force: z.boolean().default(false).describe('replace an existing out file'),
        })
        .strict(),
      annotations: { destructiveHint: false, openWorldHint: false },
      async run(args, { ctx, signal, progress }) {
        checkFormat(args.format, 'format');
        const path = await ctx.root.inputTree(args.path, 'path');
        const out = args.out === undefined ? await resultFile(ctx, 'converted', 'jsonl') : await ctx.root.output(args.out, 'out');
        await checkNewOutput(out, { force: args.force });
        const problems: ConversionProblem[] = [];
        let converted = 0;
        async function* items(): AsyncGenerator<ConversionItem> {
          for await (const item of convertPath(path, defined({ format: args.format, model: args.model }), { exclude: [out] })) {
            if (signal.aborted) throw new GymflowError('CANCELLED', `convert_logs: cancelled after ${converted} trajectories`);
            if (!isConversionProblem(item)) await progress(++converted, undefined, `${converted} trajectories`);
            yield item;
          }
        }
        const summary = await writeJsonl(items(), out, { onProblem: (p) => problems.push(p), keepWhenEmpty: true, replace: args.force });
        const errors = problems.filter((p) => p.severity === 'error').length;
        const shown = problems.map((p) => shownProblem(ctx, p));
        const data = { out: summary.committed ? ctx.root.show(out) : null, trajectories: summary.written, errors, warnings: problems.length - errors, problems: shown };
        return {
          summary: `converted ${summary.written} trajectories from ${args.path}${summary.committed ? ` to ${ctx.root.show(out)}` : '; nothing written'}; ${problems.length} problem(s), ${errors} error(s)`,
          data,
          brief: { ...data, problems: shown.slice(0, LIST_SHOWN) },
        };
      },
    }),
    defineTool({
      name: 'validate_logs',
      title: 'Validate agent logs',
      description:
        'Checks logs against their format, given or detected: a gymflow trajectory JSONL file line by line against the trajectory schema and its content id; another agent-log format (or a directory of logs) by converting it without writing anything. ' +
        'Returns the records read, how many are valid, and every problem with its file, line and JSON path (e.g. runs.jsonl:17 $.steps[3].action.tool: expected string, received null). Changes nothing.',
      input: z
        .object({
          path: relativePath.describe('a trajectory JSONL file, an agent log, or a directory of logs, under the root'),
          format: formatField(),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
      async run(args, { ctx, signal }) {
        checkFormat(args.format, 'format');
        const path = await ctx.root.inputTree(args.path, 'path');
        const report = await validateLog(path, { signal, ...defined({ format: args.format }) });
        const errors = report.problems.filter((p) => p.severity === 'error').length;
        const shown = report.problems.map((p) => shownProblem(ctx, p));
        const data = { path: ctx.root.show(path), format: report.format, records: report.records, valid: report.valid, errors, problems: shown };
        return {
          summary: `${args.path} (${report.format ?? 'mixed formats'}): ${report.valid}/${report.records} valid, ${report.problems.length} problem(s), ${errors} error(s)`,
          data,
          brief: { ...data, problems: shown.slice(0, LIST_SHOWN) },
        };
      },
    }),
    defineTool({
      name: 'get_schema',
      title: 'Trajectory JSON Schema',
      description: 'Returns the JSON Schema of a gymflow trajectory (one JSON object per line in .jsonl files): task, agent, steps with actions, observations and rewards, outcome. Also the resource gymflow://schema/trajectory.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      async run() {
        return { summary: 'the gymflow trajectory JSON Schema (schemaVersion 1.0)', data: { schema: trajectoryJsonSchema() } };
      },
    }),
    defineTool({
      name: 'recorder_diff',
      title: 'Compare two trajectories',
      description:
        'Compares two trajectories (from trajectory JSONL files or any supported agent log): step counts, tool calls per tool and which calls only one made, header and outcome differences, and the first step where they diverge with the differing fields.',
      input: z
        .object({
          a: relativePath.describe('the first file'),
          b: relativePath.describe('the second file'),
          index_a: z.number().int().min(0).default(0).describe('which trajectory of file a (0-based)'),
          index_b: z.number().int().min(0).default(0).describe('which trajectory of file b (0-based)'),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
      async run(args, { ctx }) {
        const [fa, fb] = await Promise.all([ctx.root.input(args.a, 'a'), ctx.root.input(args.b, 'b')]);
        const [ta, tb] = await Promise.all([nthTrajectory(fa, args.index_a), nthTrajectory(fb, args.index_b)]);
        const diff = diffTrajectories(ta, tb);
        const where = diff.identical ? 'identical' : diff.firstDivergence ? `first divergence at step ${diff.firstDivergence.index}` : 'same steps, different header or outcome';
        return { summary: `${args.a}[${args.index_a}] vs ${args.b}[${args.index_b}]: ${diff.steps.a} vs ${diff.steps.b} steps, ${where}`, data: { ...diff } };
      },
    }),
  ];
}
