import type { AgentResolver } from '../../core/agent.js';
import { mixSeed } from '../../core/rng.js';
import { make } from '../../core/registry.js';
import { runEpisode } from '../../core/rollout.js';
import type { AgentEnv } from '../../core/types.js';
import { Wrapper } from '../../core/wrappers/wrapper.js';
import { SWE_ENV_ID, SweEnv } from './env.js';
import type { Prediction } from './harness.js';

/** One agent episode on an instance: its prediction and how the episode itself ended. */
export interface AgentEpisode {
  prediction: Prediction;
  /** The episode's own grading at `submit` (undefined when it did not submit). */
  resolvedInEpisode: boolean | undefined;
  /** Why it ended (`submitted`, `max_steps`, …). */
  reason: string;
  steps: number;
}

/** Options of {@link agentPredictions}. */
export interface AgentPredictionsOptions {
  /** The keyword arguments of `gymflow/swe-v0` (instances, repos, specs, …). */
  kwargs: Record<string, unknown>;
  /** The instances to run (ids). */
  instanceIds: readonly string[];
  /** The agent spec (`expert`, `openai:MODEL`, …) and how to build it (`resolveAgent` of src/policy). */
  agent: string;
  resolveAgent: AgentResolver;
  /** Name written as `model_name_or_path` (default the agent spec). */
  modelName?: string;
  /** Episodes at once (default 1); each worker keeps one environment. */
  concurrency?: number;
  /** Seed of the episode seeds (default 0): instance i gets `mixSeed(seed, i)`. */
  seed?: number;
  /** Called after each episode. */
  onEpisode?: (e: AgentEpisode) => void;
}

/**
 * Runs an agent on SWE-bench instances in `gymflow/swe-v0` and turns each episode into a prediction in SWE-bench's
 * format: the episode's patch (what it submitted, or the diff of /work when a limit ended it). Graded then by
 * {@link gradePredictions} in fresh containers, exactly as predictions made elsewhere are.
 */
export async function agentPredictions(o: AgentPredictionsOptions): Promise<AgentEpisode[]> {
  const out: AgentEpisode[] = new Array<AgentEpisode>(o.instanceIds.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    let env: AgentEnv | undefined;
    try {
      while (next < o.instanceIds.length) {
        const i = next++;
        const id = o.instanceIds[i] as string;
        env ??= make(SWE_ENV_ID, { kwargs: o.kwargs });
        const seed = mixSeed(o.seed ?? 0, i);
        const agent = o.resolveAgent(o.agent, SWE_ENV_ID, { seed });
        try {
          const traj = await runEpisode(env, agent, { envId: SWE_ENV_ID, task: id, seed });
          const inner = env instanceof Wrapper ? env.unwrapped : env;
          const patch = inner instanceof SweEnv ? await inner.episodePatch() : '';
          const last = traj.steps[traj.steps.length - 1];
          const submitted = last?.action.tool === 'submit' && traj.outcome.terminated;
          const e: AgentEpisode = {
            prediction: { instance_id: id, model_name_or_path: o.modelName ?? o.agent, model_patch: patch },
            resolvedInEpisode: submitted ? traj.outcome.success : undefined,
            reason: traj.outcome.reason,
            steps: traj.steps.length,
          };
          out[i] = e;
          o.onEpisode?.(e);
        } finally {
          await agent.close?.();
        }
      }
    } finally {
      await env?.close();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? 1, o.instanceIds.length)) }, worker));
  return out;
}
