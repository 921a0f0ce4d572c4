import type { Agent } from '../agent.js';
import { type Action, type AgentEnv, isDone, type TaskInfo, type TimeStep } from '../types.js';

/** An episode played by {@link playEpisode}, every time step kept. */
export interface PlayedEpisode {
  /** Whether the last time step's info says so. */
  success: boolean;
  /** Each step in order: the agent's action and the time step it led to. */
  steps: { action: Action; ts: TimeStep }[];
  /** The reset's time step, then each step's. */
  timeSteps: TimeStep[];
  /** The last time step. */
  last: TimeStep;
}

/**
 * Plays one episode of `agent` on task `taskId` of `env` (seeded `seed`) to its end, keeping every time step, for
 * tests that look at an environment's info and rewards step by step (`runEpisode` records a trajectory instead).
 * No step limit: wrap `env` in `MaxSteps` where the agent may never stop. The environment is not closed.
 */
export async function playEpisode(env: Pick<AgentEnv, 'reset' | 'step' | 'tools'>, agent: Agent, taskId: string, seed: number): Promise<PlayedEpisode> {
  let ts = await env.reset({ task: taskId, seed });
  const task = ts.info.task as TaskInfo;
  await agent.reset?.(task, seed);
  const history: { action: Action; observation: string; info: Record<string, unknown> }[] = [];
  const steps: PlayedEpisode['steps'] = [];
  const timeSteps = [ts];
  while (!isDone(ts)) {
    const { action } = await agent.act({ task, tools: env.tools, observation: ts.observation, history, stepIndex: history.length });
    ts = await env.step(action);
    history.push({ action, observation: ts.observation, info: ts.info });
    steps.push({ action, ts });
    timeSteps.push(ts);
  }
  return { success: ts.info.success === true, steps, timeSteps, last: ts };
}

/**
 * Plays `actions` on task `taskId` of `env` (seeded `seed`, default 1) until the episode ends or they run out;
 * returns every time step, the reset's first.
 */
export async function replayActions(env: Pick<AgentEnv, 'reset' | 'step'>, taskId: string, actions: readonly Action[], seed = 1): Promise<TimeStep[]> {
  const out = [await env.reset({ task: taskId, seed })];
  for (const a of actions) {
    if (isDone(lastOf(out))) break;
    out.push(await env.step(a));
  }
  return out;
}

/** The last of a list of time steps (an episode's has at least the reset's). */
export function lastOf(steps: readonly TimeStep[]): TimeStep {
  return steps[steps.length - 1] as TimeStep;
}
