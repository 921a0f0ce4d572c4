import type { AgentInfo } from './wrappers/recorder.js';
import type { Action, StepMeta, TaskInfo, TimeStep, ToolSpec } from './types.js';

/** What an agent sees when it chooses its next action. */
export interface AgentContext {
  task: TaskInfo;
  tools: readonly ToolSpec[];
  /** The latest observation (the reset observation at step 0). */
  observation: string;
  /** Earlier steps of this episode, oldest first. */
  history: readonly { action: Action; observation: string; info: Record<string, unknown> }[];
  stepIndex: number;
}

/** An agent's decision: the action plus what it said around it. */
export interface AgentDecision {
  action: Action;
  meta?: StepMeta;
}

/**
 * Something that acts in an environment: a scripted expert, a random agent, a local ONNX model, a
 * remote LLM. `act` is async because real policies do I/O.
 */
export interface Agent {
  readonly info: AgentInfo;
  /** Called at the start of every episode, with the episode's seed when one was given. */
  reset?(task: TaskInfo, seed: number | undefined): void | Promise<void>;
  act(ctx: AgentContext): Promise<AgentDecision>;
  close?(): Promise<void>;
}

/** Builds an agent for one environment (the registry's `agents` map holds these). */
export type AgentFactory = (options: { seed?: number }) => Agent;

/**
 * Builds the agent for one episode from a spec string (`expert`, `random`, `local:DIR`, `openai:MODEL`):
 * the signature of `resolveAgent` in `src/policy/specs.ts`. `collect` (src/hub) and `evaluate` (src/eval)
 * take one as an argument rather than importing src/policy, which sits beside them, and tests pass their own.
 *
 * @example
 * ```ts
 * import { resolveAgent } from '../policy/specs.js';
 * await collect({ envId: 'gymflow/tool-use-v0', agent: 'expert', resolveAgent, n: 8 });
 * // options of the policy besides the seed are bound by the caller:
 * const sampled: AgentResolver = (spec, envId, o) => resolveAgent(spec, envId, { ...o, local: { temperature: 0.7 } });
 * ```
 */
export type AgentResolver = (agentSpec: string, envId: string, options: { seed?: number }) => Agent;

/** Convenience: the first-step context from a reset time step. */
export function initialContext(ts: TimeStep, tools: readonly ToolSpec[]): AgentContext {
  return { task: ts.info.task as TaskInfo, tools, observation: ts.observation, history: [], stepIndex: 0 };
}
