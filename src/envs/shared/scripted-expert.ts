import type { Agent, AgentContext, AgentDecision } from '../../core/agent.js';
import { GymflowError } from '../../core/errors.js';
import type { Action, TaskInfo } from '../../core/types.js';
import type { AgentInfo } from '../../core/wrappers/recorder.js';

/** An expert's plan for one episode: yields actions, receives each action's observation. */
export type Script = Generator<Action, void, string>;

/** Thrown by a {@link Script} that finds the world not as its plan needs (the expert then gives up). */
export class ExpertFailed extends GymflowError {
  constructor(message: string) {
    super('EXPERT_FAILED', message);
  }
}

/**
 * A scripted expert: one {@link Script} per episode, fed the observations, and a give-up action once the script
 * ends, fails ({@link ExpertFailed}: the reason becomes the step's thought) or cannot start (an unknown task id).
 * Subclasses say how a task's script starts.
 */
export abstract class ScriptedExpert implements Agent {
  private script: Script | undefined;
  private taskId: string | undefined;

  /** `giveUp`: the action taken when there is no script to follow (household's `finish`, webshop's `buy`). */
  protected constructor(
    readonly info: AgentInfo,
    private readonly giveUp: Action,
  ) {}

  /** The script for `task`; a {@link GymflowError} (an unknown task id) makes the agent give up. */
  protected abstract start(task: TaskInfo): Script;

  /** Starts the script for the task. */
  reset(task: TaskInfo): void {
    this.taskId = task.id;
    try {
      this.script = this.start(task);
    } catch (err) {
      if (!(err instanceof GymflowError)) throw err;
      this.script = undefined;
    }
  }

  /** Feeds the latest observation to the script and returns its next tool call. */
  async act(ctx: AgentContext): Promise<AgentDecision> {
    // Callers that skip `reset` (or reuse the agent across tasks) still get a fresh script.
    if (this.taskId !== ctx.task.id || ctx.stepIndex === 0) this.reset(ctx.task);
    const giveUp: AgentDecision = { action: this.giveUp };
    const script = this.script;
    if (!script) return giveUp;
    try {
      const next = ctx.stepIndex === 0 ? script.next() : script.next(ctx.observation);
      return next.done ? giveUp : { action: next.value };
    } catch (err) {
      if (!(err instanceof ExpertFailed)) throw err;
      this.script = undefined;
      return { ...giveUp, meta: { thought: err.message } };
    }
  }
}
