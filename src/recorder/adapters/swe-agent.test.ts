import { describe, expect, it } from 'vitest';
import { convertFixture, only, step, tools } from '../__fixtures__/fixtures.js';
import { parseCommandLine, sweAgentAdapter, sweAgentOutcome } from './swe-agent.js';

// Expected values were read from the fixtures with jq/python, independently of the adapter.
describe('swe-agent adapter', () => {
  it('v1 function calling (test-repo): calls from history, the last step from its command line', async () => {
    const c = await convertFixture(sweAgentAdapter, 'swe-agent/v1-fc-testrepo-1c2844.traj');
    expect(c.errors).toEqual([]);
    const t = only(c);
    expect(t.envId).toBe('external/swe-agent-v0');
    expect(t.task).toMatchObject({ id: 'SWE-agent__test-repo-i1', domain: 'coding' });
    expect(t.task.instruction).toContain('SyntaxError: invalid syntax');
    expect(t.agent).toEqual({ name: 'swe-agent', model: 'gpt-4o' });
    expect(tools(t)).toEqual(['find_file', 'open', 'edit', 'bash', 'submit']);
    expect(step(t, 0).action.params).toEqual({ file_name: 'missing_colon.py' });
    expect(step(t, 0).observation).toContain('Found 1 matches for "missing_colon.py"');
    expect(step(t, 0).durationMs).toBeCloseTo(281.4128329991945, 6);
    expect(step(t, 2).action.params).toEqual({
      search: 'def division(a: float, b: float) -> float',
      replace: 'def division(a: float, b: float) -> float:',
      'replace-all': false,
    });
    expect(step(t, 3).action.params).toEqual({ command: 'python3 /SWE-agent__test-repo/tests/missing_colon.py' });
    expect(step(t, 3).observation).toBe('8.2');
    // history[] stops before the submit, so its action comes from the command line.
    expect(step(t, 4).action.params).toEqual({ command: 'submit' });
    expect(step(t, 4).metadata?.actionSource).toBe('command_line');
    expect(step(t, 0).metadata?.actionSource).toBe('tool_call');
    expect(t.steps.map((s) => s.metadata?.category)).toEqual(['search', 'read', 'write', 'execute', 'submit']);
    expect(step(t, 1).thought).toMatch(/^The file `missing_colon.py` is located in the `tests` directory/);
    expect(t.outcome).toEqual({ success: false, score: 0, terminated: true, truncated: false, reason: 'submitted' });
    expect(t.metadata.submission).toContain('diff --git a/tests/missing_colon.py');
    expect((t.metadata.info as { model_stats: { instance_cost: number } }).model_stats.instance_cost).toBeCloseTo(0.01952, 8);
    expect(t.metadata.syntheticTimestamps).toBe(true);
    expect(step(t, 0).startedAt).toBe('1970-01-01T00:00:00.000Z');
  });

  it('v1 demonstration (marshmallow): structured params, reused tool-call ids', async () => {
    const t = only(await convertFixture(sweAgentAdapter, 'swe-agent/v1-fc-demo-marshmallow-1867.traj'));
    expect(t.task.id).toBe('marshmallow-code__marshmallow-1867');
    expect(t.steps).toHaveLength(11);
    expect(tools(t)).toEqual(['create', 'edit', 'bash', 'bash', 'find_file', 'open', 'edit', 'edit', 'bash', 'bash', 'submit']);
    expect(step(t, 0).action.params).toEqual({ filename: 'reproduce.py' });
    expect(step(t, 5).action.params).toEqual({ path: 'src/marshmallow/fields.py', line_number: 1474 });
    expect(step(t, 2).observation).toBe('344');
    expect(step(t, 8).observation).toBe('345');
    expect(step(t, 6).observation).toContain('Your proposed edit has introduced new syntax error');
    expect(step(t, 10).action).toEqual({ tool: 'submit', params: {} });
    // The demonstration reuses one call id for four different bash calls.
    expect([2, 3, 8, 9].map((i) => step(t, i).metadata?.toolCallId)).toEqual(Array(4).fill('call_5iDdbOYybq7L19vqXmR0DPaU'));
    expect(t.outcome.reason).toBe('submitted');
  });

  it('0.x text commands (pydicom): tool = SWE-agent command or bash, params = the command line', async () => {
    const t = only(await convertFixture(sweAgentAdapter, 'swe-agent/legacy-gpt4-pydicom-1458.traj'));
    expect(t.task.id).toBe('legacy-gpt4-pydicom-1458');
    expect(t.agent).toEqual({ name: 'swe-agent' });
    expect(tools(t)).toEqual(['create', 'edit', 'bash', 'find_file', 'open', 'edit', 'edit', 'edit', 'edit', 'bash', 'bash', 'submit']);
    expect(step(t, 0).action.params).toEqual({ command: 'create reproduce_bug.py' });
    expect(step(t, 3).action.params).toEqual({ command: 'find_file "numpy_handler.py"' });
    expect(step(t, 2).action.params).toEqual({ command: 'python reproduce_bug.py' });
    expect(String(step(t, 1).action.params.command)).toMatch(/^edit 1:1\nimport numpy as np\n/);
    expect(step(t, 9).observation).toContain('Script completed successfully, no errors. Result: True');
    expect(step(t, 0).metadata?.state).toEqual({ open_file: 'n/a', working_dir: '/pydicom__pydicom' });
    expect(t.metadata.demonstrations).toHaveLength(1);
    expect((t.metadata.info as { model_stats: { instance_cost: number } }).model_stats.instance_cost).toBe(1.26719);
    expect(t.outcome).toMatchObject({ terminated: true, reason: 'submitted', success: false });
  });

  it('history-only demonstration: OpenAI conversation; outcome inferred from the final submit', async () => {
    const t = only(await convertFixture(sweAgentAdapter, 'swe-agent/demo-history-only-function-calling-simple.traj'));
    expect(t.task.id).toBe('demo-history-only-function-calling-simple');
    expect(tools(t)).toEqual(['find_file', 'open', 'edit', 'bash', 'submit']);
    expect(step(t, 1).action.params).toEqual({ path: 'tests/missing_colon.py' });
    expect(step(t, 3).action.params).toEqual({ command: 'python tests/missing_colon.py' });
    expect(step(t, 3).observation).toMatch(/^8\.2\n\(Open file:/);
    expect(step(t, 0).thought).toMatch(/^The `SyntaxError` in `missing_colon.py`/);
    expect(t.metadata.systemPrompt).toMatch(/^SETTING: You are an autonomous programmer/);
    expect(t.outcome).toMatchObject({ terminated: true, reason: 'submitted' });
    expect(t.metadata.outcomeInferred).toBe(true);
  });

  it('maps command lines and exit statuses', () => {
    expect(parseCommandLine('open foo.py 10\n')).toEqual({ tool: 'open', params: { command: 'open foo.py 10' } });
    expect(parseCommandLine('ls -la')).toEqual({ tool: 'bash', params: { command: 'ls -la' } });
    expect(sweAgentOutcome('submitted (exit_cost)', 'edit')).toMatchObject({ truncated: true, reason: 'cost_limit' });
    expect(sweAgentOutcome('exit_context', 'edit')).toMatchObject({ truncated: true, reason: 'context_limit' });
    expect(sweAgentOutcome('exit_format', 'edit')).toMatchObject({ truncated: true, reason: 'error' });
    expect(sweAgentOutcome('exit_forfeit', 'exit_forfeit')).toMatchObject({ terminated: true, reason: 'forfeited' });
    expect(sweAgentOutcome(undefined, 'bash')).toMatchObject({ terminated: false, truncated: false, reason: 'unknown' });
  });
});
