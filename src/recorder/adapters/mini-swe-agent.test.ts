import { describe, expect, it } from 'vitest';
import { convertFixture, only, step, tools } from '../__fixtures__/fixtures.js';
import { miniSweAgentAdapter } from './mini-swe-agent.js';

describe('mini-swe-agent adapter', () => {
  it('legacy message list: bash blocks, observations verbatim, submission inferred', async () => {
    const c = await convertFixture(miniSweAgentAdapter, 'mini-swe-agent/legacy-list-github-issue.traj.json');
    expect(c.problems).toEqual([]);
    const t = only(c);
    expect(t.envId).toBe('external/mini-swe-agent-v0');
    expect(t.task.id).toBe('legacy-list-github-issue');
    expect(t.task.instruction).toMatch(/^Please solve this issue: GitHub Issue: SyntaxError: invalid syntax/);
    expect(t.steps).toHaveLength(10);
    expect(new Set(tools(t))).toEqual(new Set(['bash']));
    expect(step(t, 0).action.params).toEqual({ command: 'cat /Users/fuchur/Documents/24/git_sync/swe-agent-test-repo/tests/./missing_colon.py' });
    expect(step(t, 0).thought).toBe("I'll help you solve this issue. Let me first examine the content of the file that's causing the syntax error.");
    expect(step(t, 0).observation).toContain('No such file or directory');
    expect(step(t, 0).metadata?.returncode).toBe(1);
    expect(step(t, 6).observation).toBe('<returncode>0</returncode>\n<output>\n8.2\n</output>');
    expect(step(t, 9).action.params).toEqual({ command: 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached' });
    expect(step(t, 9).observation).toMatch(/^diff --git a\/tests\/missing_colon.py/);
    expect(step(t, 9).metadata?.category).toBe('submit');
    expect(step(t, 8).metadata?.category).toBe('execute');
    expect(t.outcome).toMatchObject({ terminated: true, reason: 'submitted', success: false });
    expect(t.metadata.outcomeInferred).toBe(true);
  });

  it('1.0 text actions: exit status and model from info', async () => {
    const t = only(await convertFixture(miniSweAgentAdapter, 'mini-swe-agent/v1-text-deterministic-test-output.traj.json'));
    expect(t.agent).toEqual({ name: 'mini-swe-agent', model: 'deterministic' });
    expect(t.steps).toHaveLength(10);
    expect(t.task.instruction).toMatch(/^<pr_description>\nConsider the following PR description:/);
    expect(step(t, 1).action.params).toEqual({ command: 'ls -la' });
    expect(step(t, 9).action.params).toEqual({ command: 'echo MINI_SWE_AGENT_FINAL_OUTPUT && git add -A && git diff --cached' });
    expect(t.metadata).toMatchObject({ exitStatus: 'Submitted', trajectoryFormat: 'mini-swe-agent-1' });
    expect((t.metadata.info as { mini_version: string }).mini_version).toBe('1.13.4');
    expect(t.outcome.reason).toBe('submitted');
  });

  it('1.1 tool calls (django): real timestamps, costs, and the exit message answering the submit', async () => {
    const t = only(await convertFixture(miniSweAgentAdapter, 'mini-swe-agent/v1.1-toolcall-deepseek-django-14752.traj.json'));
    expect(t.task.id).toBe('django__django-14752');
    expect(t.agent).toEqual({ name: 'mini-swe-agent', model: 'deepseek/deepseek-chat' });
    expect(t.steps).toHaveLength(31);
    expect(new Set(tools(t))).toEqual(new Set(['bash']));
    const s0 = step(t, 0);
    expect(s0.action.params).toEqual({ command: 'find /testbed -type f -name "*.py" | grep -i autocomplete | head -20' });
    expect(s0.startedAt).toBe('2026-04-10T09:21:37.218Z');
    expect(s0.durationMs).toBe(301);
    expect(s0.observation).toContain('/testbed/django/contrib/admin/views/autocomplete.py');
    expect(s0.metadata?.toolCallId).toBe('call_00_9ZSwNwRjFxvwMIvlqQPpvOuX');
    expect(s0.metadata?.cost).toBeCloseTo(0.00051702, 8);
    expect(s0.metadata?.returncode).toBe(0);
    const last = step(t, 30);
    expect(last.action.params).toEqual({ command: 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt' });
    expect(last.observation).toMatch(/^diff --git a\/django\/contrib\/admin\/views\/autocomplete.py/);
    expect(last.metadata?.observationSource).toBe('exit');
    expect(t.outcome).toMatchObject({ terminated: true, reason: 'submitted' });
    expect(t.metadata.syntheticTimestamps).toBeUndefined();
  });

  it('1.1 error exit (pvlib): reasoning content as thought, truncated by an API error', async () => {
    const t = only(await convertFixture(miniSweAgentAdapter, 'mini-swe-agent/v1.1-toolcall-error-exit-pvlib-1606.traj.json'));
    expect(t.agent.model).toBe('deepseek/deepseek-reasoner');
    expect(t.steps).toHaveLength(4);
    expect(step(t, 0).action.params).toEqual({ command: 'ls -la /testbed' });
    expect(step(t, 0).thought).toMatch(/^I'll start by exploring the current directory/);
    expect(step(t, 3).action.params).toEqual({ command: "sed -n '302,400p' /testbed/pvlib/tools.py" });
    expect(t.outcome).toEqual({ success: false, score: 0, terminated: false, truncated: true, reason: 'error' });
    expect(t.metadata.exitStatus).toBe('InternalServerError');
    expect(t.metadata.exceptionStr).toContain('SSL: UNEXPECTED_EOF_WHILE_READING');
  });
});
