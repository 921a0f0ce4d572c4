import type { Agent, AgentContext, AgentDecision } from '../../src/core/agent.js';
import type { Action, TaskInfo } from '../../src/core/types.js';
import type { AgentInfo } from '../../src/core/wrappers/recorder.js';
import { ToolUseExpert } from '../../src/envs/tool-use/expert.js';

/**
 * Test support for the policy clients' tests (`src/policy/openai.test.ts`, `anthropic.test.ts`): wraps a policy
 * under test and remembers the context of the step in flight, so that a fake model server can ask the tool-use
 * expert what the right next call is.
 */
export class ExpertOracle implements Agent {
  readonly info: AgentInfo;
  private current: AgentContext | undefined;
  private readonly expert = new ToolUseExpert();
  /** The calls the oracle told the server to answer with, in order. */
  readonly answered: Action[] = [];

  constructor(private readonly inner: Agent) {
    this.info = inner.info;
  }

  /** Resets the wrapped policy. */
  async reset(task: TaskInfo, seed: number | undefined): Promise<void> {
    await this.inner.reset?.(task, seed);
  }

  /** Records the context, then lets the wrapped policy act. */
  act(ctx: AgentContext): Promise<AgentDecision> {
    this.current = ctx;
    return this.inner.act(ctx);
  }

  /** The expert's next call for the step in flight. */
  async next(): Promise<Action> {
    if (!this.current) throw new Error('no step in flight');
    const { action } = await this.expert.act(this.current);
    this.answered.push(action);
    return action;
  }

  /** The step in flight's index. */
  get stepIndex(): number {
    return this.current?.stepIndex ?? -1;
  }
}
