/**
 * Reward tools: process reward of one trajectory, logs converted and scored in one pass, preference pairs,
 * calibration to human labels, rubrics, leaderboards. Each is `gymflow reward …` / `gymflow record process`'s function.
 */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError, GymflowError } from '../../../core/errors.js';
import { checkNewOutput, writeFileAtomically } from '../../../core/output-file.js';
import { getProfile, listProfiles } from '../../../core/profiles/index.js';
import { checkTrajectory, type Trajectory } from '../../../core/trajectory.js';
import { fitCalibrationFromFiles, readTrajectoriesFile, saveCalibration } from '../../../reward/calibration/index.js';
import { JudgeConfigSchema } from '../../../reward/judge/config.js';
import { allRubrics } from '../../../reward/rubric-list.js';
import { leaderboard } from '../../../reward/leaderboard.js';
import { buildPreferences } from '../../../reward/preferences.js';
import { scoreTrajectory } from '../../../reward/score.js';
import { checkFormat, nthTrajectory } from '../../commands/record.js';
import { DEFAULT_LEARNED_WEIGHT, loadScoring, type Scoring } from '../../commands/reward.js';
import { processLogs } from '../../process-logs.js';
import { defineTool, resultFile, type ToolCall, type ToolContext, type ToolDefinition } from '../context.js';
import { LIST_SHOWN, relativePath } from './fields.js';
import { formatField, shownProblem } from './recorder.js';
import { defined } from '../../../core/defined.js';

/** The arguments that choose the reward layers (the flags of `gymflow reward score`). */
const scoringFields = {
  domain: z.string().min(1).describe(`the domain profile whose rules and rubric weights apply: ${listProfiles()
    .map((p) => p.name)
    .join(', ')}`),
  judge: JudgeConfigSchema.optional().describe('the LLM-as-judge layer (off without it): {provider: anthropic|openai, model, baseURL?, apiKeyEnv?, cachePath?, …}; keys come from the environment'),
  calibration: relativePath.optional().describe('a calibration JSON file (calibrate_reward) to apply'),
  reward_model: relativePath.optional().describe('an ONNX reward-model directory: the learned layer scores every step as rubric `learned`'),
  learned_weight: z.number().positive().default(DEFAULT_LEARNED_WEIGHT).describe('weight of the `learned` rubric (with reward_model)'),
  reference_steps: z.number().int().positive().optional().describe('reference solution length for the efficiency rule (default: the profile step budget)'),
};

/** The parsed scoring arguments. */
interface ScoringArgs {
  domain: string;
  judge?: z.output<typeof JudgeConfigSchema> | undefined;
  calibration?: string | undefined;
  reward_model?: string | undefined;
  learned_weight: number;
  reference_steps?: number | undefined;
}

/** The reward layers of a call, with every path it names confined to the root. */
async function scoringOf(ctx: ToolContext, args: ScoringArgs): Promise<Scoring> {
  try {
    getProfile(args.domain);
  } catch (err) {
    throw new ConfigError(`domain: ${(err as Error).message}`);
  }
  const judge = args.judge === undefined ? undefined : { ...args.judge, ...defined({ cachePath: args.judge.cachePath === undefined ? undefined : await ctx.root.output(args.judge.cachePath, 'judge.cachePath') }) };
  return loadScoring({
    domain: args.domain,
    learnedWeight: args.learned_weight,
    ...(judge === undefined ? {} : { judge, judgeSource: 'judge' }),
    ...defined({
      calibration: args.calibration === undefined ? undefined : await ctx.root.input(args.calibration, 'calibration'),
      rewardModel: args.reward_model === undefined ? undefined : await ctx.root.input(args.reward_model, 'reward_model'),
      referenceSteps: args.reference_steps,
    }),
  });
}

/** A trajectory's per-step rewards, in brief. */
function stepRewards(t: Trajectory): { index: number; tool: string; reward: number | null }[] {
  return t.steps.map((s) => ({ index: s.index, tool: s.action.tool, reward: s.reward?.score ?? null }));
}

/** An output file under the root: the one named, else a new one in the results directory; checked new unless forced. */
async function outputOf(ctx: ToolContext, given: string | undefined, field: string, tool: string, ext: string, force: boolean): Promise<string> {
  const out = given === undefined ? await resultFile(ctx, tool, ext) : await ctx.root.output(given, field);
  await checkNewOutput(out, { force });
  return out;
}

/** `process_log` and `process_logs_batch`: the same work on a file or a directory. */
async function processTool(args: ScoringArgs & { path: string; out?: string | undefined; format?: string | undefined; model?: string | undefined; force: boolean }, call: ToolCall, kind: 'file' | 'directory', tool: string) {
  const { ctx, signal, progress } = call;
  checkFormat(args.format, 'format');
  const path = await ctx.root.inputTree(args.path, 'path');
  const isDir = (await stat(path)).isDirectory();
  if (kind === 'file' && isDir) throw new ConfigError(`path: ${args.path} is a directory; process_logs_batch processes a directory`);
  if (kind === 'directory' && !isDir) throw new ConfigError(`path: ${args.path} is a file, not a directory; process_log processes one file`);
  const out = await outputOf(ctx, args.out, 'out', tool, 'jsonl', args.force);
  const scoring = await scoringOf(ctx, args);
  try {
    const summary = await processLogs(path, out, {
      convert: defined({ format: args.format, model: args.model }),
      score: scoring.options,
      replace: args.force,
      signal,
      onTrajectory: (n, t) => progress(n, undefined, `scored ${t.task.id} (${n})`),
    });
    const problems = summary.problems.map((p) => shownProblem(ctx, p));
    const trajectories = summary.trajectories.map((t) => ({ ...t, file: t.file === null ? null : ctx.root.show(t.file) }));
    const data = {
      out: summary.written ? ctx.root.show(out) : null,
      scored: summary.scored,
      meanReward: summary.meanReward,
      errors: summary.errors,
      warnings: summary.problems.length - summary.errors,
      problems,
      trajectories,
      judge: scoring.judge?.usage() ?? null,
    };
    return {
      summary: `scored ${summary.scored} trajectories from ${args.path}${summary.written ? ` into ${ctx.root.show(out)}` : '; nothing written'} (mean reward ${summary.meanReward === null ? '-' : summary.meanReward.toFixed(3)}); ${summary.problems.length} problem(s), ${summary.errors} error(s)`,
      data,
      brief: { ...data, problems: problems.slice(0, LIST_SHOWN), trajectories: trajectories.slice(0, LIST_SHOWN) },
    };
  } finally {
    await scoring.release();
  }
}

/** The reward tools. */

/** The input of `process_log` and `process_logs_batch`: what `path` names, the format, the scoring, the output. */
function processInput(pathDescription: string) {
  return z
    .object({
      path: relativePath.describe(pathDescription),
      format: formatField(),
      model: z.string().min(1).optional().describe('the model name for logs that do not record one'),
      ...scoringFields,
      out: relativePath.optional().describe('the scored JSONL file; default: a new file in .gymflow/mcp/'),
      force: z.boolean().default(false).describe('replace an existing out file'),
    })
    .strict();
}

export function rewardTools(): ToolDefinition[] {
  return [
    defineTool({
      name: 'score_trajectory',
      title: 'Score one trajectory',
      description:
        "Computes the process reward of one trajectory with the layers configured: the domain's rule layer always; the LLM judge, a calibration and a learned reward model when given. Returns the reward summary (total, outcome, process, efficiency, per layer) and each step's reward. " +
        'The trajectory comes inline (a gymflow trajectory object) or from a file (a trajectory JSONL file or any supported agent log, converted on the fly; index picks one). With out, the scored trajectory is written there as one JSONL line.',
      input: z
        .object({
          trajectory: z.record(z.string(), z.unknown()).optional().describe('a gymflow trajectory object (get_schema); give this or file'),
          file: relativePath.optional().describe('a trajectory JSONL file or an agent log under the root; give this or trajectory'),
          index: z.number().int().min(0).default(0).describe('which trajectory of file (0-based)'),
          ...scoringFields,
          out: relativePath.optional().describe('write the scored trajectory here (one JSONL line)'),
          force: z.boolean().default(false).describe('replace an existing out file'),
        })
        .strict(),
      annotations: { readOnlyHint: false, openWorldHint: true },
      async run(args, { ctx, signal }) {
        if ((args.trajectory === undefined) === (args.file === undefined)) throw new ConfigError(`give exactly one of trajectory (an object) and file (a path)${args.trajectory === undefined ? '' : ', not both'}`);
        const t = args.trajectory !== undefined ? checkTrajectory(args.trajectory, 'trajectory') : await nthTrajectory(await ctx.root.input(args.file as string, 'file'), args.index);
        const out = args.out === undefined ? undefined : await outputOf(ctx, args.out, 'out', 'scored', 'jsonl', args.force);
        const scoring = await scoringOf(ctx, args);
        let scored: Trajectory;
        try {
          if (signal.aborted) throw new GymflowError('CANCELLED', 'score_trajectory: cancelled');
          scored = await scoreTrajectory(t, scoring.options);
        } finally {
          await scoring.release();
        }
        if (out !== undefined) await writeFileAtomically(out, `${JSON.stringify(scored)}\n`, { replace: args.force });
        const total = scored.reward?.total;
        return {
          summary: `trajectory ${scored.id.slice(0, 19)}… (task ${scored.task.id}, ${scored.steps.length} steps): reward ${total === undefined ? '-' : total.toFixed(3)} on ${args.domain}${out === undefined ? '' : `; written to ${ctx.root.show(out)}`}`,
          data: { id: scored.id, task: scored.task.id, domain: args.domain, outcome: scored.outcome, reward: scored.reward ?? null, steps: stepRewards(scored), judge: scoring.judge?.usage() ?? null, out: out === undefined ? null : ctx.root.show(out) },
        };
      },
    }),
    defineTool({
      name: 'process_log',
      title: 'Convert, validate and score one log',
      description:
        'One agent log, end to end: converts it to trajectories (format detected or given), validates each (schema and content id) and scores each with the reward layers configured; writes the scored trajectories as JSONL and returns each one\'s reward and every problem with file, line and JSON path.',
      input: processInput('an agent log file under the root'),
      annotations: { readOnlyHint: false, openWorldHint: true },
      run: (args, call) => processTool(args, call, 'file', 'processed'),
    }),
    defineTool({
      name: 'process_logs_batch',
      title: 'Convert, validate and score a directory of logs',
      description:
        'Every agent log under a directory (recursively; files no adapter recognises are skipped with a warning), end to end as process_log: converted, validated, scored, written as one scored JSONL file. Reports progress per trajectory and stops when cancelled (nothing written then).',
      input: processInput('a directory of agent logs under the root'),
      annotations: { readOnlyHint: false, openWorldHint: true },
      run: (args, call) => processTool(args, call, 'directory', 'processed-batch'),
    }),
    defineTool({
      name: 'build_preferences',
      title: 'Build preference pairs',
      description:
        '(chosen, rejected) pairs from scored trajectories of the same task, by reward margin (ties and pairs below min_margin dropped, at most max_pairs_per_task per task, largest margins kept). Writes them as JSONL and returns the statistics.',
      input: z
        .object({
          file: relativePath.describe('a scored trajectory JSONL file (score_trajectory, process_log, or gymflow reward score)'),
          out: relativePath.optional().describe('the pairs JSONL file; default: a new file in .gymflow/mcp/'),
          min_margin: z.number().min(0).default(0.1).describe('smallest score difference kept'),
          max_pairs_per_task: z.number().int().positive().default(4).describe('cap per task'),
          force: z.boolean().default(false).describe('replace an existing out file'),
        })
        .strict(),
      annotations: { readOnlyHint: false, openWorldHint: false },
      async run(args, { ctx }) {
        const file = await ctx.root.input(args.file, 'file');
        const out = await outputOf(ctx, args.out, 'out', 'preferences', 'jsonl', args.force);
        const { trajectories, errors } = await readTrajectoriesFile(file);
        const { pairs, stats } = buildPreferences(trajectories, { minMargin: args.min_margin, maxPairsPerTask: args.max_pairs_per_task });
        await writeFileAtomically(out, pairs.map((p) => `${JSON.stringify(p)}\n`).join(''), { replace: args.force });
        return {
          summary: `${stats.pairs} pairs from ${stats.trajectories} trajectories over ${stats.tasks} tasks, written to ${ctx.root.show(out)}${errors.length > 0 ? `; ${errors.length} bad line(s) left out` : ''}`,
          data: { out: ctx.root.show(out), ...stats, skipped: errors },
        };
      },
    }),
    defineTool({
      name: 'calibrate_reward',
      title: 'Calibrate the reward to human labels',
      description:
        'Fits a monotone (isotonic) map from the automatic scores to human labels and saves it (apply it with the calibration argument of the scoring tools). Returns agreement before and after (Pearson, Spearman, Kendall tau-b, pairwise agreement with bootstrap CIs; MAE).',
      input: z
        .object({
          labels: relativePath.describe('human labels JSONL: {"trajectoryId", "stepIndex"?, "score"} per line'),
          scored: relativePath.describe('the scored trajectories JSONL the labels refer to'),
          out: relativePath.optional().describe('where to save the calibration (JSON); default: a new file in .gymflow/mcp/'),
          level: z.enum(['step', 'trajectory']).optional().describe("step or trajectory (default: the labels' own level)"),
          label_range: z
            .tuple([z.number(), z.number()])
            .optional()
            .describe('[min, max] of the human label scale, mapped onto [0, 1] (e.g. [1, 5])'),
          force: z.boolean().default(false).describe('replace an existing out file'),
        })
        .strict(),
      annotations: { readOnlyHint: false, openWorldHint: false },
      async run(args, { ctx }) {
        if (args.label_range !== undefined && !(args.label_range[0] < args.label_range[1])) throw new ConfigError(`label_range: expected [min, max] with min < max, got [${args.label_range.join(', ')}]`);
        const [labels, scored] = await Promise.all([ctx.root.input(args.labels, 'labels'), ctx.root.input(args.scored, 'scored')]);
        const out = await outputOf(ctx, args.out, 'out', 'calibration', 'json', args.force);
        const { calibration, report, errors } = await fitCalibrationFromFiles(labels, scored, {
          ...defined({ level: args.level, labelRange: args.label_range }),
        });
        await saveCalibration(out, calibration, { replace: args.force });
        return {
          summary: `calibration on ${report.pairs} labelled ${report.level === 'step' ? 'steps' : 'trajectories'} saved to ${ctx.root.show(out)}: MAE ${report.baseline.mae.toFixed(3)} -> ${report.calibrated.mae.toFixed(3)}`,
          data: { out: ctx.root.show(out), ...report, skipped: errors },
        };
      },
    }),
    defineTool({
      name: 'list_rubrics',
      title: 'List rubrics',
      description: "Every rubric per domain: the rule layer's rules and the judge's rubrics, with their weights, source and description.",
      input: z.object({ domain: z.string().min(1).optional().describe('one domain only') }).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      async run(args) {
        let profiles;
        try {
          profiles = args.domain === undefined ? listProfiles() : [getProfile(args.domain)];
        } catch (err) {
          throw new ConfigError(`domain: ${(err as Error).message}`);
        }
        const rows = profiles.flatMap((p) => allRubrics(p).map((r) => ({ domain: p.name, ...r })));
        return { summary: `${rows.length} rubrics over ${profiles.length} domain(s)`, data: { rubrics: rows } };
      },
    }),
    defineTool({
      name: 'reward_leaderboard',
      title: 'Reward leaderboard',
      description: 'Ranks scored trajectories by agent, model or task: mean score with a bootstrap 95% CI and success rate with a Wilson 95% interval, best first.',
      input: z
        .object({
          file: relativePath.describe('a scored trajectory JSONL file'),
          by: z.enum(['agent', 'model', 'task']).default('agent').describe('group by agent, model or task'),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
      async run(args, { ctx }) {
        const file = await ctx.root.input(args.file, 'file');
        const { trajectories, errors } = await readTrajectoriesFile(file);
        const rows = leaderboard(trajectories, { by: args.by });
        const top = rows[0];
        return {
          summary: `${rows.length} ${args.by}(s) ranked over ${trajectories.length} trajectories${top ? `; first: ${top.key} (mean ${top.meanScore.estimate.toFixed(3)})` : ''}${errors.length > 0 ? `; ${errors.length} bad line(s) left out` : ''}`,
          data: { by: args.by, rows, skipped: errors },
        };
      },
    }),
  ];
}
