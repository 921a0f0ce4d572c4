import { describe, expect, it } from 'vitest';
import type { AgentContext } from '../../core/agent.js';
import { ConfigError } from '../../core/errors.js';
import type { TaskInfo } from '../../core/types.js';
import { ExpertFailed, ScriptedExpert, type Script } from './scripted-expert.js';

/** Looks, then answers with what it saw; fails on a task named `fail-*`, cannot start on `unknown-*`. */
class Echo extends ScriptedExpert {
  constructor() {
    super({ name: 'echo' }, { tool: 'finish', params: {} });
  }

  protected start(task: TaskInfo): Script {
    if (task.id.startsWith('unknown')) throw new ConfigError(`no task ${task.id}`);
    return (function* (): Script {
      const seen = yield { tool: 'look', params: {} };
      if (task.id.startsWith('fail')) throw new ExpertFailed(`nothing to do with '${seen}'`);
      yield { tool: 'answer', params: { text: seen } };
    })();
  }
}

const ctx = (id: string, stepIndex: number, observation: string): AgentContext => ({
  task: { id, domain: 'generic', instruction: '' },
  tools: [],
  observation,
  history: [],
  stepIndex,
});

describe('ScriptedExpert', () => {
  it('follows the script, feeding it each observation, then gives up once it ends', async () => {
    const agent = new Echo();
    expect((await agent.act(ctx('t-1', 0, 'start'))).action).toEqual({ tool: 'look', params: {} });
    expect((await agent.act(ctx('t-1', 1, 'a lamp'))).action).toEqual({ tool: 'answer', params: { text: 'a lamp' } });
    expect((await agent.act(ctx('t-1', 2, 'ok'))).action).toEqual({ tool: 'finish', params: {} });
  });

  it('gives up with the reason as its thought when the script fails, and on a task it cannot start', async () => {
    const agent = new Echo();
    await agent.act(ctx('fail-1', 0, 'start'));
    expect(await agent.act(ctx('fail-1', 1, 'fog'))).toEqual({ action: { tool: 'finish', params: {} }, meta: { thought: "nothing to do with 'fog'" } });
    expect((await agent.act(ctx('unknown-1', 0, 'start'))).action).toEqual({ tool: 'finish', params: {} });
  });

  it('starts a fresh script on a new task or a first step, even without reset', async () => {
    const agent = new Echo();
    await agent.act(ctx('t-1', 0, 'start'));
    expect((await agent.act(ctx('t-2', 1, 'x'))).action).toEqual({ tool: 'look', params: {} });
    expect((await agent.act(ctx('t-2', 0, 'again'))).action).toEqual({ tool: 'look', params: {} });
  });
});
