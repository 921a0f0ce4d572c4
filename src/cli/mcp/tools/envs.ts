/**
 * Environment and evaluation tools: the registered environments, one episode, an evaluation, a comparison of
 * evaluations. Each is `gymflow envs` / `run-episode` / `eval` / `compare`'s function.
 */
import { setImmediate } from 'node:timers/promises';
import { z } from 'zod';
import { ConfigError } from '../../../core/errors.js';
import { checkNewOutput, writeFileAtomically } from '../../../core/output-file.js';
import { spec } from '../../../core/registry.js';
import { compare } from '../../../eval/compare.js';
import { evaluate } from '../../../eval/evaluate.js';
import { EVAL_METRICS } from '../../../eval/metrics.js';
import { resolveAgent } from '../../../policy/specs.js';
import { labelsFor, loadEvalResult } from '../../commands/compare.js';
import { environmentRows } from '../../commands/envs.js';
import { runOneEpisode } from '../../commands/run-episode.js';
import { checkedEnvKwargs } from '../../options.js';
import { defineTool, resultFile, type ToolContext, type ToolDefinition } from '../context.js';
import { relativePath } from './fields.js';
import { defined } from '../../../core/defined.js';

/** Observations longer than this are cut in a run_episode reply (the trajectory file holds them whole). */
const OBSERVATION_SHOWN = 300;

const envField = z.string().min(1).describe('a registered environment id, e.g. gymflow/tool-use-v0 (list_environments)');
const agentField = z
  .string()
  .min(1)
  .describe('an agent spec: expert | random | openai:MODEL[@BASE_URL] | anthropic:MODEL | local:DIR[?temperature=T] (a directory under the root)');
const envKwargsField = z.record(z.string(), z.unknown()).optional().describe("the environment's keyword arguments, e.g. {\"admissibleActions\": true}");

/** The environment id, checked against the registry (the error names the argument and lists the ids). */
function checkedEnv(id: string): string {
  try {
    spec(id);
  } catch (err) {
    throw new ConfigError(`env: ${(err as Error).message}`);
  }
  return id;
}

/** An agent spec with a `local:DIR` model directory confined to the root (made absolute). */
async function confinedAgent(ctx: ToolContext, agent: string): Promise<string> {
  if (!agent.startsWith('local:')) return agent;
  const rest = agent.slice('local:'.length);
  const q = rest.indexOf('?');
  const dir = q < 0 ? rest : rest.slice(0, q);
  return `local:${await ctx.root.input(dir, 'agent')}${q < 0 ? '' : rest.slice(q)}`;
}

/** The environment and evaluation tools. */
export function envTools(): ToolDefinition[] {
  return [
    defineTool({
      name: 'list_environments',
      title: 'List environments',
      description: 'Lists the registered environments: id, domain, step limit, the agents that know it (expert, random), its tools, and its train / held-out task counts.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      async run() {
        const rows = await environmentRows();
        return { summary: `${rows.length} environments: ${rows.map((r) => r.id).join(', ')}`, data: { environments: rows } };
      },
    }),
    defineTool({
      name: 'run_episode',
      title: 'Run one episode',
      description:
        'Runs one episode of an agent in an environment and writes its trajectory (one JSONL line) to out. Returns the outcome and each step (tool, parameters, observation cut to 300 characters). Reports progress per step; cancelling stops before the next action.',
      input: z
        .object({
          env: envField,
          agent: agentField.default('expert'),
          seed: z.number().int().optional().describe('the episode seed'),
          task: z.string().min(1).optional().describe('a task id (default: a training task drawn with the seed)'),
          env_kwargs: envKwargsField,
          out: relativePath.optional().describe('the trajectory file (JSONL); default: a new file in .gymflow/mcp/'),
          force: z.boolean().default(false).describe('replace an existing out file'),
        })
        .strict(),
      annotations: { readOnlyHint: false, openWorldHint: true },
      async run(args, { ctx, signal, progress }) {
        const env = checkedEnv(args.env);
        const out = args.out === undefined ? await resultFile(ctx, 'episode', 'jsonl') : await ctx.root.output(args.out, 'out');
        await checkNewOutput(out, { force: args.force });
        const kwargs = await checkedEnvKwargs(env, defined({ envKwargs: args.env_kwargs }), { envKwargs: 'env_kwargs', user: 'user' });
        const limit = spec(env).maxEpisodeSteps;
        const t = await runOneEpisode({
          env,
          agent: await confinedAgent(ctx, args.agent),
          signal,
          onStep: (n) => progress(n, limit, `step ${n}`),
          ...defined({ seed: args.seed, task: args.task, kwargs }),
        });
        await writeFileAtomically(out, `${JSON.stringify(t)}\n`, { replace: args.force });
        const steps = t.steps.map((s) => ({ index: s.index, tool: s.action.tool, params: s.action.params, observation: s.observation.length > OBSERVATION_SHOWN ? `${s.observation.slice(0, OBSERVATION_SHOWN)}…` : s.observation }));
        return {
          summary: `${t.envId} task ${t.task.id}, agent ${t.agent.name}: ${t.steps.length} steps, success ${t.outcome.success}, score ${t.outcome.score} (${t.outcome.reason}); trajectory in ${ctx.root.show(out)}`,
          data: { out: ctx.root.show(out), id: t.id, envId: t.envId, task: t.task, agent: t.agent, outcome: t.outcome, steps },
          brief: { out: ctx.root.show(out), id: t.id, envId: t.envId, task: { id: t.task.id }, agent: t.agent, outcome: t.outcome, steps: t.steps.length },
        };
      },
    }),
    defineTool({
      name: 'evaluate_agent',
      title: 'Evaluate an agent',
      description:
        "Evaluates an agent on an environment's split: n seeded episodes (times trials), every metric with a bootstrap confidence interval, success with a Wilson interval, pass^k with trials. Writes the result JSON (compare_evaluations' input) to out and returns its metrics. Reports progress per episode; cancelling stops starting episodes.",
      input: z
        .object({
          env: envField,
          agent: agentField,
          split: z.enum(['heldout', 'train']).default('heldout').describe('task split'),
          episodes: z.number().int().positive().default(20).describe('episodes of one trial (task i = tasks[i mod #tasks])'),
          trials: z.number().int().positive().default(1).describe("run the episodes' tasks k times and report pass^1..pass^k"),
          seed: z.number().int().default(0).describe('seed of the episode seeds and the bootstrap'),
          concurrency: z.number().int().positive().default(4).describe('episodes run at once'),
          resamples: z.number().int().positive().default(2000).describe('bootstrap resamples'),
          confidence: z.number().gt(0).lt(1).default(0.95).describe('interval coverage'),
          env_kwargs: envKwargsField,
          out: relativePath.optional().describe('the result JSON file; default: a new file in .gymflow/mcp/'),
          force: z.boolean().default(false).describe('replace an existing out file'),
        })
        .strict(),
      annotations: { readOnlyHint: false, openWorldHint: true },
      async run(args, { ctx, signal, progress }) {
        const env = checkedEnv(args.env);
        const out = args.out === undefined ? await resultFile(ctx, 'eval', 'json') : await ctx.root.output(args.out, 'out');
        await checkNewOutput(out, { force: args.force });
        const envKwargs = await checkedEnvKwargs(env, defined({ envKwargs: args.env_kwargs }), { envKwargs: 'env_kwargs', user: 'user' });
        const total = args.episodes * args.trials;
        let done = 0;
        const result = await evaluate({
          envId: env,
          agent: await confinedAgent(ctx, args.agent),
          resolveAgent,
          split: args.split,
          n: args.episodes,
          trials: args.trials,
          seed: args.seed,
          concurrency: args.concurrency,
          resamples: args.resamples,
          confidence: args.confidence,
          signal,
          onEpisode: async (e) => {
            await progress(++done, total, `episode ${done}/${total}: ${e.taskId} ${e.success ? 'success' : 'failure'}`);
            // Episodes of an in-memory environment never wait on I/O: without a turn of the event loop here the
            // server would not read the client's cancellation (or any other request) until the evaluation ended.
            await setImmediate();
          },
          ...defined({ envKwargs }),
        });
        await writeFileAtomically(out, `${JSON.stringify(result, null, 2)}\n`, { replace: args.force });
        const { episodes: _episodes, ...summary } = result;
        const s = result.metrics.success;
        return {
          summary: `${args.agent} on ${env} (${args.split}): success ${s.successes}/${s.n}${s.wilson ? ` (Wilson ${(s.wilson.low * 100).toFixed(1)}-${(s.wilson.high * 100).toFixed(1)}%)` : ''}; result in ${ctx.root.show(out)}`,
          data: { out: ctx.root.show(out), ...summary },
        };
      },
    }),
    defineTool({
      name: 'compare_evaluations',
      title: 'Compare evaluations',
      description:
        "Compares two or more evaluate_agent results on one metric: Welch's t, Mann-Whitney U and paired t for every pair (or each against the first), bootstrap intervals of the differences, Holm-adjusted significance, and a leaderboard.",
      input: z
        .object({
          results: z.array(relativePath).min(2).describe('two or more result JSON files (evaluate_agent out, gymflow eval --out) under the root'),
          metric: z.enum(EVAL_METRICS).default('reward').describe(`the metric compared: ${EVAL_METRICS.join(', ')}`),
          baseline: z.boolean().default(false).describe('compare every result with the first only (default: all pairs)'),
          test: z.enum(['welch', 'mann-whitney', 'paired']).default('welch').describe('the test behind the significance marks'),
          alpha: z.number().gt(0).lt(1).default(0.05).describe('family-wise error rate (Holm)'),
          resamples: z.number().int().positive().default(2000).describe('bootstrap resamples'),
          seed: z.number().int().default(0).describe('bootstrap seed'),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
      async run(args, { ctx }) {
        const files = await Promise.all(args.results.map((f, i) => ctx.root.input(f, `results[${i}]`)));
        const results = await Promise.all(files.map((f) => loadEvalResult(f)));
        const labels = labelsFor(args.results, results);
        const report = compare(results, {
          metric: args.metric,
          mode: args.baseline ? 'baseline' : 'all-pairs',
          primary: args.test,
          alpha: args.alpha,
          resamples: args.resamples,
          seed: args.seed,
          confidence: results[0]?.confidence ?? 0.95,
          ...defined({ labels }),
        });
        const top = report.leaderboard[0];
        return { summary: `${results.length} results compared on ${args.metric}${top ? `; first: ${top.label}` : ''}`, data: { ...report } };
      },
    }),
  ];
}
