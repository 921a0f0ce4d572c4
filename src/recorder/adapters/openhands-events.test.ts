import { describe, expect, it } from 'vitest';
import { convertFixture, only, step, tools } from '../__fixtures__/fixtures.js';
import { openHandsEventsAdapter } from './openhands-events.js';

describe('openhands-events adapter', () => {
  it('GUI session: function calls, observations by cause, naive timestamps as UTC', async () => {
    const c = await convertFixture(openHandsEventsAdapter, 'openhands/events-basic-gui-mode.json');
    expect(c.problems).toEqual([]);
    const t = only(c);
    expect(t.envId).toBe('external/openhands-v0');
    expect(t.task.instruction).toMatch(/^I want to create a VueJS app that allows me to:/);
    expect(t.agent).toEqual({ name: 'openhands', model: 'claude-3-5-sonnet-20241022' });
    expect(tools(t)).toEqual(['execute_bash', 'str_replace_editor', 'str_replace_editor', 'execute_bash', 'respond']);
    const s0 = step(t, 0);
    expect(s0.action.params).toEqual({ command: 'mkdir -p /workspace/todo-app' });
    expect(s0.startedAt).toBe('2025-01-20T20:29:35.040Z');
    expect(s0.durationMs).toBe(659); // observation at 20:29:35.699033
    expect(s0.metadata?.exitCode).toBe(0);
    expect(s0.metadata?.toolCallId).toBe('toolu_01W9Z8jBctr8X2frZV9p1RYs');
    expect(s0.thought).toMatch(/^I'll help you create a Vue.js application/);
    expect(step(t, 1).action.params).toMatchObject({ command: 'create', path: '/workspace/todo-app/index.html' });
    expect(String(step(t, 1).action.params.file_text)).toContain('<!DOCTYPE html>');
    expect(step(t, 1).observation).toMatch(/^--- \/workspace\/todo-app\/index.html/);
    expect(step(t, 3).observation).toContain('Serving HTTP on 0.0.0.0 port 8000');
    expect(step(t, 3).metadata?.exitCode).toBe(-1);
    expect(String(step(t, 4).action.params.content)).toMatch(/^I've created a complete Vue.js todo application/);
    expect(t.outcome).toEqual({ success: false, score: 0, terminated: true, truncated: false, reason: 'awaiting_user_input' });
    expect((t.metadata.agentStates as { state: string }[]).map((s) => s.state)).toEqual(['loading', 'init', 'running', 'awaiting_user_input']);
    expect(t.metadata.nullObservations).toBe(3);
  });

  it('chat without tools: agent messages are respond steps answered by the user', async () => {
    const t = only(await convertFixture(openHandsEventsAdapter, 'openhands/events-basic-interactions-no-tools.json'));
    expect(t.task.instruction).toBe("what's 1+1?");
    expect(tools(t)).toEqual(['respond', 'respond', 'finish']);
    expect(step(t, 0).action.params).toEqual({ content: '1 + 1 equals 2.' });
    expect(step(t, 0).observation).toBe("No, I mean by Goldbach's conjecture!");
    expect(step(t, 1).observation).toBe('Finish please');
    expect(step(t, 2).action.params).toEqual({});
    expect(step(t, 2).metadata?.missingObservation).toBeUndefined();
    expect(t.agent.model).toBe('gpt-4o-2024-08-06');
    expect(t.outcome).toMatchObject({ terminated: true, reason: 'finished' });
  });

  it('file rename: editor view, bash mv, finish', async () => {
    const t = only(await convertFixture(openHandsEventsAdapter, 'openhands/events-wrong-initial-state.json'));
    expect(t.task.instruction).toBe('Please rename game_2048.py to 2048.py');
    expect(tools(t)).toEqual(['str_replace_editor', 'execute_bash', 'str_replace_editor', 'finish']);
    expect(step(t, 0).action.params).toEqual({ command: 'view', path: '/workspace' });
    expect(step(t, 0).observation).toContain("Here's the files and directories up to 2 levels deep in /workspace");
    expect(step(t, 1).action.params.command).toBe('mv /workspace/game_2048.py /workspace/2048.py');
    expect(step(t, 3).thought).toMatch(/^The file has been successfully renamed/);
    expect(t.outcome).toMatchObject({ terminated: true, reason: 'finished', success: false });
  });
});
