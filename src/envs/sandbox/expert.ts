import type { Agent, AgentContext, AgentDecision } from '../../core/agent.js';
import { TaskError } from '../../core/errors.js';
import type { AgentInfo } from '../../core/wrappers/recorder.js';
import { builtinTasks, loadTasks, type SandboxTask } from './tasks.js';

/** Where the expert writes the reference patch before `git apply` (removed right after). */
export const EXPERT_PATCH_FILE = '.gymflow-reference.patch';

/**
 * A scripted solver for `gymflow/sandbox-v0` that works only through the tools: it writes the task's
 * reference patch with `file_write`, applies it with `shell` (`git apply`, then removes the file), looks at
 * `git status`, and submits.
 */
export class SandboxExpert implements Agent {
  readonly info: AgentInfo = { name: 'sandbox-expert' };
  private tasks: SandboxTask[] | undefined;

  /** @param tasksFile the tasks JSONL the environment uses (default: the built-in tasks). */
  constructor(private readonly tasksFile?: string) {}

  private find(id: string): SandboxTask {
    this.tasks ??= this.tasksFile === undefined ? builtinTasks() : loadTasks(this.tasksFile);
    const t = this.tasks.find((x) => x.id === id);
    if (!t) throw new TaskError(`sandbox expert: unknown task '${id}'`);
    return t;
  }

  async act(ctx: AgentContext): Promise<AgentDecision> {
    const task = this.find(ctx.task.id);
    switch (ctx.stepIndex) {
      case 0:
        return { action: { tool: 'file_write', params: { path: EXPERT_PATCH_FILE, content: task.patch } }, meta: { thought: 'Write the fix as a patch.' } };
      case 1:
        return {
          action: { tool: 'shell', params: { command: `git apply --whitespace=nowarn ${EXPERT_PATCH_FILE} && rm ${EXPERT_PATCH_FILE}` } },
          meta: { thought: 'Apply it.' },
        };
      case 2:
        return { action: { tool: 'git', params: { subcommand: 'status', args: ['--short'] } } };
      default:
        return { action: { tool: 'submit', params: {} }, meta: { thought: 'The fix is in; submit.' } };
    }
  }
}
