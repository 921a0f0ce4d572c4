import { setImmediate } from 'node:timers/promises';
import type { Command } from 'commander';
import { checkNewOutput, writeFileAtomically } from '../../core/output-file.js';
import type { Agent } from '../../core/agent.js';
import { GymflowError } from '../../core/errors.js';
import { make, spec } from '../../core/registry.js';
import type { Trajectory } from '../../core/trajectory.js';
import type { TaskInfo } from '../../core/types.js';
import { runEpisode } from '../../core/rollout.js';
import { resolveAgent } from '../../policy/specs.js';
import { checkedEnvKwargs, parseInteger, printJson, withEnvKwargsOptions, type EnvKwargsOpts } from '../options.js';
import { defined } from '../../core/defined.js';

interface RunEpisodeOpts extends EnvKwargsOpts {
  env: string;
  agent: string;
  seed?: number;
  task?: string;
  out?: string;
  force?: boolean;
  json?: boolean;
}

/** What {@link runOneEpisode} runs. */
export interface OneEpisode {
  /** A registered environment id. */
  env: string;
  /** An agent spec (`expert`, `random`, `openai:MODEL`, `local:DIR`, …). */
  agent: string;
  seed?: number;
  /** A task id (default: a training task drawn with the seed). */
  task?: string;
  /** The environment's keyword arguments, already checked ({@link checkedEnvKwargs}). */
  kwargs?: Record<string, unknown>;
  /** After each step: steps taken so far. */
  onStep?: (steps: number) => void | Promise<void>;
  /** Stops the episode before the agent's next action (a `CANCELLED` error). */
  signal?: AbortSignal;
}

/**
 * Runs one episode of an agent in a fresh environment and returns its trajectory; closes the environment and the
 * agent whatever happens.
 */
export async function runOneEpisode(o: OneEpisode): Promise<Trajectory> {
  const agent = resolveAgent(o.agent, o.env, defined({ seed: o.seed }));
  const env = make(o.env, defined({ kwargs: o.kwargs }));
  // The agent is asked before each step: the place to stop, and to count the steps.
  const followed: Agent = {
    info: agent.info,
    act: async (ctx) => {
      // A turn of the event loop first: the steps of an in-memory environment never wait on I/O, and the signal
      // (a client's cancellation) could not arrive otherwise.
      if (o.signal !== undefined) await setImmediate();
      if (o.signal?.aborted === true) throw new GymflowError('CANCELLED', `run-episode: cancelled after ${ctx.stepIndex} steps of ${o.agent} on ${o.env}`);
      if (ctx.stepIndex > 0) await o.onStep?.(ctx.stepIndex);
      return agent.act(ctx);
    },
    ...(agent.reset ? { reset: (task: TaskInfo, seed: number | undefined) => agent.reset?.(task, seed) } : {}),
  };
  try {
    const t = await runEpisode(env, followed, { envId: o.env, ...defined({ seed: o.seed, task: o.task }) });
    await o.onStep?.(t.steps.length);
    return t;
  } finally {
    await env.close();
    await agent.close?.();
  }
}

/** `gymflow run-episode`: one episode of an agent in an environment, written as a trajectory. */
export function runEpisodeCommand(program: Command): void {
  withEnvKwargsOptions(program.command('run-episode'))
    .description('run one episode and print (or write) its trajectory')
    .requiredOption('--env <id>', 'environment id, e.g. gymflow/text-math-v0')
    .option('--agent <spec>', 'agent: expert | random | openai:MODEL[@BASE_URL] | anthropic:MODEL | local:DIR[?temperature=T&top_p=P&max_new_tokens=N]', 'expert')
    .option('--seed <n>', 'episode seed', parseInteger)
    .option('--task <id>', 'task id (default: a training task drawn with the seed)')
    .option('--out <file>', 'write the trajectory as one JSONL line to this file')
    .option('--force', 'replace an existing --out file (by default an error)')
    .option('--json', 'print the whole trajectory as JSON instead of a summary')
    .action(async (opts: RunEpisodeOpts) => {
      spec(opts.env); // fails early with the list of registered ids
      // Before the agent loads: an episode of a model API costs money.
      if (opts.out !== undefined) await checkNewOutput(opts.out, { force: opts.force === true });
      const kwargs = await checkedEnvKwargs(opts.env, opts);
      const t = await runOneEpisode(defined({ env: opts.env, agent: opts.agent, seed: opts.seed, task: opts.task, kwargs }));
      if (opts.out) await writeFileAtomically(opts.out, `${JSON.stringify(t)}\n`, { replace: opts.force === true });
      if (opts.json) return printJson(t);
      const ret = t.steps.reduce((a, s) => a + (s.envReward ?? 0), 0);
      console.log(`${t.envId} task=${t.task.id} agent=${t.agent.name} steps=${t.steps.length} success=${t.outcome.success} score=${t.outcome.score} return=${ret} reason=${t.outcome.reason}`);
      for (const s of t.steps) {
        const obs = s.observation.replace(/\s+/g, ' ').slice(0, 100);
        console.log(`  ${s.index}. ${s.action.tool}(${JSON.stringify(s.action.params)}) -> ${obs}`);
      }
      if (opts.out) console.log(`trajectory ${t.id} written to ${opts.out}`);
    });
}
