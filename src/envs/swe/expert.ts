import type { Agent, AgentContext, AgentDecision } from '../../core/agent.js';
import { TaskError } from '../../core/errors.js';
import type { AgentInfo } from '../../core/wrappers/recorder.js';
import { EXPERT_PATCH_FILE } from '../sandbox/expert.js';
import { knownSweInstance } from './env.js';

/**
 * The gold-patch agent of `gymflow/swe-v0`, working only through the tools: it writes the instance's gold patch
 * with `file_write`, applies it with `shell` (`git apply`, then removes the file) and submits. It finds the
 * instance among those a `gymflow/swe-v0` environment of this process loaded; on a correct instance it resolves.
 */
export class SweExpert implements Agent {
  readonly info: AgentInfo = { name: 'swe-expert' };

  async act(ctx: AgentContext): Promise<AgentDecision> {
    const instance = knownSweInstance(ctx.task.id);
    if (!instance) throw new TaskError(`swe expert: instance '${ctx.task.id}' was not loaded by a ${'gymflow/swe-v0'} environment of this process`);
    switch (ctx.stepIndex) {
      case 0:
        return { action: { tool: 'file_write', params: { path: EXPERT_PATCH_FILE, content: instance.patch } }, meta: { thought: 'Write the fix as a patch.' } };
      case 1:
        return { action: { tool: 'shell', params: { command: `git apply --whitespace=nowarn ${EXPERT_PATCH_FILE} && rm ${EXPERT_PATCH_FILE}` } }, meta: { thought: 'Apply it.' } };
      default:
        return { action: { tool: 'submit', params: {} }, meta: { thought: 'The fix is in; submit.' } };
    }
  }
}
