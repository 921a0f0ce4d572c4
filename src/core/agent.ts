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

/** Convenience: the first-step context from a reset time step. */
export function initialContext(ts: TimeStep, tools: readonly ToolSpec[]): AgentContext {
  return { task: ts.info.task as TaskInfo, tools, observation: ts.observation, history: [], stepIndex: 0 };
}
