import type { Agent, AgentContext, AgentDecision } from '../../core/agent.js';
import { GymflowError, TaskError } from '../../core/errors.js';
import type { TaskInfo } from '../../core/types.js';
import type { AgentInfo } from '../../core/wrappers/recorder.js';
import { apply, type MathExpr } from './expression.js';
import type { Fraction } from './fraction.js';
import { getMathTask } from './tasks.js';

/** The working for an expression, one line per operation, innermost first (`3 × 4 = 12`). */
export function solveWithWorking(expr: MathExpr): { value: Fraction; steps: string[] } {
  const steps: string[] = [];
  const walk = (e: MathExpr): Fraction => {
    if (e.kind === 'num') return e.value;
    const a = walk(e.left);
    const b = walk(e.right);
    const value = apply(e.op, a, b);
    steps.push(`${a.toString()} ${e.op} ${b.toString()} = ${value.toString()}`);
    return value;
  };
  const value = walk(expr);
  return { value, steps };
}

/**
 * A scripted solver for `gymflow/text-math-v0`. It recovers the problem's structured form from the task
 * id (the same generator the environment uses), computes the answer operation by operation with exact
 * fractions, writes that working with `think`, then submits the result in canonical form. It never
 * reads a stored answer: the gold answer is not stored anywhere, only the problem.
 */
export class TextMathExpert implements Agent {
  readonly info: AgentInfo = { name: 'text-math-expert' };
  private plan: { taskId: string; working: string; answer: string } | undefined;

  /** Recovers the task's structured form and computes the answer with its working. */
  reset(task: TaskInfo): void {
    this.plan = undefined;
    try {
      const { value, steps } = solveWithWorking(getMathTask(task.id).expr);
      this.plan = { taskId: task.id, working: steps.join('\n'), answer: value.toString() };
    } catch (err) {
      // A task this expert does not know (another generator's id): `act` refuses it rather than guess, so
      // an expert dataset never holds a made-up answer.
      if (!(err instanceof GymflowError)) throw err;
      this.plan = undefined;
    }
  }

  /** `think` the working once, then `submit` the answer. */
  async act(ctx: AgentContext): Promise<AgentDecision> {
    // Callers that skip `reset` still get a plan for the task in front of the agent.
    if (this.plan?.taskId !== ctx.task.id) this.reset(ctx.task);
    const plan = this.plan;
    if (!plan) throw new TaskError(`text-math expert: '${ctx.task.id}' is not a gymflow/text-math-v0 task id; it cannot solve it`);
    const thoughtAlready = ctx.history.some((h) => h.action.tool === 'think');
    if (!thoughtAlready) {
      const thought = `Working:\n${plan.working}`;
      return { action: { tool: 'think', params: { thought } }, meta: { thought } };
    }
    return { action: { tool: 'submit', params: { answer: plan.answer } }, meta: { thought: `The answer is ${plan.answer}.` } };
  }
}
