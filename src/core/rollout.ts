import type { Agent } from './agent.js';
import type { Trajectory } from './trajectory.js';
import type { Action, AgentEnv, ResetOptions, TaskInfo } from './types.js';
import { isDone } from './types.js';
import { Recorder } from './wrappers/recorder.js';

/** Options for {@link runEpisode}. */
export interface RunEpisodeOptions extends ResetOptions {
  /** The registered id of the environment, written into the trajectory. */
  envId: string;
  /** Safety net for environments made without a step limit. Default 1000. */
  maxSteps?: number;
  /** Extra trajectory metadata. */
  metadata?: Record<string, unknown>;
}

/**
 * Runs one episode of `agent` in `env` and returns the recorded trajectory. The environment is not
 * closed (the caller owns it and may run more episodes).
 */
export async function runEpisode(env: AgentEnv, agent: Agent, options: RunEpisodeOptions): Promise<Trajectory> {
  const recorder = new Recorder(env, { envId: options.envId, agent: agent.info });
  const reset: ResetOptions = {};
  if (options.seed !== undefined) reset.seed = options.seed;
  if (options.task !== undefined) reset.task = options.task;
  let ts = await recorder.reset(reset);
  const task = ts.info.task as TaskInfo;
  await agent.reset?.(task, options.seed);
  const history: { action: Action; observation: string; info: Record<string, unknown> }[] = [];
  const limit = options.maxSteps ?? 1000;
  while (!isDone(ts) && history.length < limit) {
    const decision = await agent.act({ task, tools: env.tools, observation: ts.observation, history, stepIndex: history.length });
    ts = await recorder.step(decision.action, decision.meta);
    history.push({ action: decision.action, observation: ts.observation, info: ts.info });
  }
  return recorder.getTrajectory(options.metadata);
}
