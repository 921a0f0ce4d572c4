import type { Agent, AgentContext, AgentDecision } from '../../core/agent.js';
import type { AgentInfo } from '../../core/wrappers/recorder.js';
import { getRecallTask, recallAnswer } from './tasks.js';

/**
 * The scripted solver of `gymflow/recall-v0`: it regenerates the task from its id (the generator the environment
 * uses) and submits the asked name's number. A task id the bank does not know is a `TaskError`.
 */
export class RecallExpert implements Agent {
  readonly info: AgentInfo = { name: 'recall-expert' };

  async act(ctx: AgentContext): Promise<AgentDecision> {
    const answer = recallAnswer(getRecallTask(ctx.task.id));
    return { action: { tool: 'submit', params: { answer } } };
  }
}
