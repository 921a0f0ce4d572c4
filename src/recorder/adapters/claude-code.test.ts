import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collect, convertFixture, fixture, only, step, tools } from '../__fixtures__/fixtures.js';
import { claudeCodeAdapter } from './claude-code.js';

describe('claude-code adapter', () => {
  it('v1.0.51 session: local bash echo in the instruction, hooks as system messages, tool errors', async () => {
    const c = await convertFixture(claudeCodeAdapter, 'claude-code/session-v1.0.51-summaries-system.jsonl');
    expect(c.problems).toEqual([]);
    const t = only(c);
    expect(t.envId).toBe('external/claude-code-v0');
    expect(t.task.id).toBe('326189cf-5676-4237-8cde-1ce80aae4a9f');
    expect(t.task.instruction).toMatch(/^<bash-input>uv run ty check<\/bash-input>/);
    expect(t.task.instruction).toMatch(/please fix these$/);
    expect(t.agent).toEqual({ name: 'claude-code', model: 'claude-sonnet-4-20250514' });
    expect(tools(t)).toEqual([
      'TodoWrite', 'Read', 'Read', 'TodoWrite', 'MultiEdit', 'TodoWrite', 'Read', 'Edit', 'TodoWrite', 'Bash', 'Edit', 'Bash', 'Edit', 'Bash', 'respond',
    ]);
    expect(step(t, 0).thought).toBe("I'll fix these type checking issues in the test file.");
    expect(step(t, 1).action.params).toEqual({ file_path: '/Users/dain/workspace/claude-code-log/test/test_cache.py', offset: 195, limit: 15 });
    expect(step(t, 9).action.params).toEqual({ command: 'uv run ty check', description: 'Run type checking to verify fixes' });
    expect(step(t, 9).error?.code).toBe('tool_error');
    expect(step(t, 11).error).toBeDefined();
    expect(step(t, 13).error).toBeUndefined();
    expect(step(t, 13).observation).toContain('All checks passed!');
    expect(String(step(t, 14).action.params.content)).toMatch(/^Perfect! Both type checking issues have been resolved/);
    expect(step(t, 4).metadata?.systemMessages).toHaveLength(2); // PostToolUse:MultiEdit hook lines
    expect(step(t, 14).metadata?.systemMessages).toHaveLength(4); // Stop hooks after the reply
    expect(t.metadata.metaMessages).toHaveLength(1);
    expect(t.metadata.fileSummaries).toHaveLength(4);
    expect(t.outcome).toEqual({ success: false, score: 0, terminated: true, truncated: false, reason: 'responded' });
  });

  it('v2.1.17 session: permission denials are step errors; real timestamps', async () => {
    const t = only(await convertFixture(claudeCodeAdapter, 'claude-code/session-v2.1.17-permission-denials.jsonl'));
    expect(t.task.instruction).toMatch(/^Search if claude -p can make use of WebSearch and Task tool/);
    expect(tools(t)).toEqual(['WebSearch', 'Bash', 'Bash', 'Bash', 'Bash', 'Bash', 'Glob', 'Bash', 'Read', 'respond']);
    expect(step(t, 0).action.params).toEqual({ query: 'Claude Code CLI -p flag WebSearch Task tool capabilities 2025 2026' });
    expect(step(t, 0).startedAt).toBe('2026-01-23T17:13:41.093Z');
    expect(step(t, 0).durationMs).toBe(8);
    expect(step(t, 0).observation).toContain("Claude requested permissions to use WebSearch, but you haven't granted it yet.");
    expect(t.steps.flatMap((s, i) => (s.error ? [i] : []))).toEqual([0, 3, 4, 5, 7, 8]);
    expect(step(t, 5).thought).toBe('Let me try a different approach - check documentation or config files.');
    expect(step(t, 6).observation).toBe('No files found');
    expect(step(t, 6).metadata?.toolUseResult).toMatchObject({ numFiles: 0 });
    expect(t.agent.model).toBe('claude-opus-4-5-20251101');
    expect(t.metadata.entryCounts).toMatchObject({ progress: 1, 'queue-operation': 1 });
  });

  it('v2.1.42 session: follows the main chain after a rewind and keeps the abandoned branch', async () => {
    const t = only(await convertFixture(claudeCodeAdapter, 'claude-code/session-v2.1.42-thinking-rewind-branches.jsonl'));
    expect(t.agent.model).toBe('claude-opus-4-6');
    expect(tools(t)).toEqual(['Bash', 'Read', 'respond', 'respond', 'respond', 'respond']);
    expect(step(t, 0).action.params).toEqual({ command: 'ls -la /home/user/project/', description: 'List contents of the ideas directory' });
    expect(step(t, 0).thought).toMatch(/^The user is talking about/);
    expect(step(t, 0).thought).toMatch(/Let me take a look at what's here\.$/);
    expect(step(t, 2).observation).toMatch(/^I actually don't like much this idea/);
    expect(step(t, 3).observation).toBe('Ok, so, to be fair, maybe also list 5 strengths of this proposal.');
    expect(step(t, 5).observation).toContain('<command-name>/exit</command-name>');
    expect(step(t, 3).thought).toMatch(/^The user wants me to critique/);
    expect(step(t, 3).metadata?.thinkingSignatures).toHaveLength(1);
    const branches = t.metadata.abandonedBranches as {
      forkAfterStep: number;
      entries: number;
      userMessages: string[];
      steps: { action: { tool: string; params: { content?: string } }; observation: string }[];
    }[];
    expect(branches).toHaveLength(1);
    const [branch] = branches;
    expect(branch?.forkAfterStep).toBe(3);
    expect(branch?.entries).toBe(10);
    expect(branch?.userMessages[0]).toMatch(/^I very much like this idea/);
    expect(branch?.steps.map((s) => s.action.tool)).toEqual(['respond', 'respond', 'respond']);
    expect(branch?.steps[0]?.observation).toBe('OK, so, to be fair, maybe also list 5 weak points, risks, or caveats.');
    expect(t.outcome.reason).toBe('responded');
  });

  it('subagent sidechain: parallel reads as one group; task id names the agent', async () => {
    const t = only(await convertFixture(claudeCodeAdapter, 'claude-code/subagent-sidechain-agent-aef063ba534d73153.jsonl'));
    expect(t.task.id).toBe('ef958aa1-0e93-49f0-bb71-150f63befcd1/agent-aef063ba534d73153');
    expect(t.task.instruction).toMatch(/^You are \*\*bob\*\* \(round 2\)/);
    expect(t.agent.model).toBe('claude-opus-4-7');
    expect(tools(t)).toEqual(['Bash', 'Read', 'Read', 'Read', 'Edit', 'Bash', 'respond']);
    expect([1, 2, 3].map((i) => step(t, i).metadata?.parallelGroup)).toEqual([0, 1, 2].map((position) => ({ id: expect.any(String), size: 3, position })));
    expect(step(t, 2).action.params).toEqual({ file_path: '-experiments/worktrees/.claude/worktrees/agent-a52886dc/work/research-plan-mode.md' });
    expect(step(t, 2).observation).toMatch(/^1\t# Plan Mode in Claude Code/);
    expect(String(step(t, 6).action.params.content)).toContain('2552732c903a393820bae8cb0d9a0985eb4a3f84');
    expect(t.metadata).toMatchObject({ isSidechain: true, agentId: 'aef063ba534d73153' });
  });

  it('reports a malformed line with its number and keeps the session', async () => {
    const text = await readFile(fixture('claude-code/subagent-sidechain-agent-aef063ba534d73153.jsonl'), 'utf8');
    const lines = text.split('\n');
    lines.splice(3, 0, '{"type": "assistant", "message": ');
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-cc-'));
    const path = join(dir, 'broken.jsonl');
    await writeFile(path, lines.join('\n'));
    const c = await collect(claudeCodeAdapter.convert(path, { file: path, options: {} }));
    expect(c.errors).toHaveLength(1);
    expect(c.errors[0]).toMatchObject({ file: path, line: 4, path: '$' });
    expect(only(c).steps).toHaveLength(7);
  });
});
