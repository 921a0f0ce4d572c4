import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { collect, only, step, tools } from '../__fixtures__/fixtures.js';
import { convertFile } from '../convert.js';
import { detectFormat, MIN_CONFIDENCE } from '../detect.js';
import { openHandsV1Adapter, testResultVerdict } from './openhands-v1.js';

/** Three benchmark runs written from the SDK's event models (see the README beside it). */
const OUTPUT = fileURLToPath(new URL('../__fixtures__/openhands-v1/output.jsonl', import.meta.url));

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'gymflow-openhands-v1-'));
}

async function runs(): Promise<Record<string, unknown>[]> {
  return (await readFile(OUTPUT, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('openhands-v1 adapter', () => {
  it('is what detection picks for a V1 output.jsonl, and the V0 event adapter is not a candidate', async () => {
    const d = await detectFormat(OUTPUT);
    expect(d.adapter?.name).toBe('openhands-v1');
    expect(d.confidence).toBeGreaterThanOrEqual(0.95);
    expect(d.candidates.map((c) => c.name)).toEqual(['openhands-v1']);
  });

  it('detects a run longer than the detection head from its text', async () => {
    const dir = await tempDir();
    const [first] = await runs();
    // A patch so long that the head ends inside test_result, before any event.
    const patchFirst = join(dir, 'patch-first.jsonl');
    await writeFile(patchFirst, `${JSON.stringify({ ...first, test_result: { git_patch: 'x'.repeat(200_000) } })}\n`);
    expect((await detectFormat(patchFirst)).adapter?.name).toBe('openhands-v1');
    // Events in the head, the line cut later by a long observation.
    const longRun = join(dir, 'long.json');
    await writeFile(longRun, JSON.stringify({ ...first, instance: { problem_statement: 'y'.repeat(200_000) } }));
    const d = await detectFormat(longRun);
    expect(d.adapter?.name).toBe('openhands-v1');
    expect(d.candidates[1]?.confidence ?? 0).toBeLessThan(MIN_CONFIDENCE);
  });

  it('converts each line of output.jsonl into one trajectory', async () => {
    const c = await collect(convertFile(OUTPUT));
    expect(c.errors).toEqual([]);
    // The one warning-free degradation: none; every observation answers a call.
    expect(c.problems).toEqual([]);
    expect(c.trajectories.map((t) => t.task.id)).toEqual(['django__django-11099', 'c61d22de-5f6c-4958-a7f6-5e9707bd3466', 'astropy__astropy-12907']);
    expect(c.trajectories.map((t) => (t.metadata.source as { line: number }).line)).toEqual([1, 2, 3]);
    for (const t of c.trajectories) expect(t.envId).toBe('external/openhands-v1');
  });

  it('SWE-bench run: calls, parallel group, observations by call id, finish', async () => {
    const [t] = (await collect(convertFile(OUTPUT, { format: 'openhands-v1' }))).trajectories;
    if (!t) throw new Error('no trajectory');
    expect(t.agent).toEqual({ name: 'openhands', model: 'litellm_proxy/claude-sonnet-4-5-20250929' });
    expect(t.task.instruction).toMatch(/^<uploaded_files>\n\/workspace\/django/);
    expect(tools(t)).toEqual(['terminal', 'file_editor', 'file_editor', 'terminal', 'finish']);
    const s0 = step(t, 0);
    // The SDK's security_risk and summary are not the tool's parameters.
    expect(s0.action.params).toEqual({ command: 'grep -rn "\\\\w.@+-" /workspace/django/django/contrib/auth/validators.py' });
    expect(s0.thought).toBe('The issue is about the regex anchors; find where the validators are defined.\n\nLet me find the validators first.');
    expect(s0.observation).toBe("10:    regex = r'^[\\w.@+-]+$'\n20:    regex = r'^[\\w.@+-]+$'");
    expect(s0.startedAt).toBe('2026-06-16T05:39:24.512Z');
    expect(s0.durationMs).toBe(501);
    expect(s0.metadata).toMatchObject({
      category: 'execute',
      exitCode: 0,
      toolCallId: 'toolu_01Aa',
      actionKind: 'TerminalAction',
      summary: 'Locate the username validators',
      securityRisk: 'LOW',
      llmResponseId: 'chatcmpl-r1',
      usage: { prompt_tokens: 9120, completion_tokens: 210 },
      latencySeconds: 5.9,
    });
    expect(step(t, 1).metadata).toMatchObject({ category: 'write', parallelGroup: { id: 'chatcmpl-r2', size: 2, position: 0 } });
    expect(step(t, 2).metadata).toMatchObject({ category: 'read', parallelGroup: { id: 'chatcmpl-r2', size: 2, position: 1 } });
    expect(step(t, 2).thought).toBeUndefined();
    expect(step(t, 2).observation).toMatch(/^Here's the result of running `cat -n` on \/workspace\/django\/tests/);
    expect(step(t, 1).metadata?.observationFields).toMatchObject({ command: 'str_replace', prev_exist: true });
    expect(step(t, 4).action.params).toEqual({ message: 'Both username validators now anchor with \\Z, so a trailing newline is rejected; the validator tests pass.' });
    expect(t.outcome).toEqual({ success: false, score: 0, terminated: true, truncated: false, reason: 'finished' });
    expect(t.metadata).toMatchObject({ successKnown: false, attempt: 1, testResult: { git_patch: expect.stringContaining('\\Z') } });
    expect(t.metadata.systemPrompt).toMatch(/^You are OpenHands agent/);
    expect((t.metadata.tools as { title: string }[]).map((x) => x.title)).toEqual(['terminal', 'file_editor', 'think', 'finish']);
    expect((t.metadata.executionStatuses as { status: string }[]).map((s) => s.status)).toEqual(['running', 'finished']);
  });

  it('GAIA run: a reply answered by the fake user, a malformed call, vLLM tokens, the score as verdict', async () => {
    const t = (await collect(convertFile(OUTPUT))).trajectories[1];
    if (!t) throw new Error('no trajectory');
    expect(tools(t)).toEqual(['respond', 'terminal', 'think', 'finish']);
    const reply = step(t, 0);
    expect(reply.action.params).toEqual({ content: 'That is Canada, so the capital is Ottawa. Shall I double-check anything else?' });
    expect(reply.observation).toMatch(/^Please continue working on the task/);
    expect(reply.tokens).toEqual({ prompt: [151644, 8948, 198, 2610, 525], completion: [4792, 374, 6864, 11, 151645] });
    const bad = step(t, 1);
    expect(bad.error).toEqual({ code: 'tool_error', message: "Error validating tool 'terminal': Expecting ',' delimiter: line 1 column 24 (char 23). Arguments: unparseable JSON" });
    expect(bad.metadata).toMatchObject({ notExecuted: true, observationKind: 'AgentErrorEvent' });
    expect(step(t, 2).thought).toBe('I should not run commands for this; reason it out.');
    expect(step(t, 2).metadata?.category).toBe('think');
    expect(t.agent.model).toBe('hosted_vllm/Qwen/Qwen3-8B');
    expect(t.outcome).toEqual({ success: true, score: 1, terminated: true, truncated: false, reason: 'finished' });
    expect(t.metadata).toMatchObject({ successKnown: true, successSource: 'test_result.score' });
  });

  it('crashed run: the call without a result, the error, truncated', async () => {
    const t = (await collect(convertFile(OUTPUT))).trajectories[2];
    if (!t) throw new Error('no trajectory');
    expect(tools(t)).toEqual(['terminal']);
    expect(step(t, 0).metadata?.missingObservation).toBe(true);
    expect(t.outcome).toEqual({ success: false, score: 0, terminated: false, truncated: true, reason: 'error' });
    expect(t.metadata.error).toMatch(/^Instance failed after 3 retries/);
    expect(t.metadata.attempt).toBe(2);
    expect(t.metadata.conversationErrors).toEqual([expect.objectContaining({ code: 'RemoteRuntimeError' })]);
    expect(t.metadata.runtimeRuns).toEqual([expect.objectContaining({ runtime_id: 'rt-5d1e0c' })]);
  });

  it('reads the file line by line: a damaged line is reported with its own number, the others convert', async () => {
    const dir = await tempDir();
    const lines = (await readFile(OUTPUT, 'utf8')).split('\n');
    lines[1] = (lines[1] ?? '').slice(0, 500);
    const path = join(dir, 'output.jsonl');
    await writeFile(path, lines.join('\n'));
    const c = await collect(convertFile(path));
    expect(c.trajectories.map((t) => t.task.id)).toEqual(['django__django-11099', 'astropy__astropy-12907']);
    expect(c.errors).toHaveLength(1);
    expect(c.errors[0]).toMatchObject({ file: path, line: 2, path: '$' });
    expect(c.errors[0]?.message).toMatch(/^invalid JSON/);
  });

  it('reads JSONL line by line whatever the file is called', async () => {
    const dir = await tempDir();
    const path = join(dir, 'runs.json');
    await writeFile(path, await readFile(OUTPUT));
    const c = await collect(convertFile(path));
    expect(c.errors).toEqual([]);
    expect(c.trajectories).toHaveLength(3);
  });

  it('converts one run as a JSON document, an event array, and a JSONL event log (one event per line)', async () => {
    const dir = await tempDir();
    const [first] = await runs();
    const history = (first?.history ?? []) as unknown[];
    const doc = join(dir, 'run.json');
    await writeFile(doc, JSON.stringify(first, null, 2));
    const events = join(dir, 'events.json');
    await writeFile(events, JSON.stringify(history));
    const log = join(dir, 'events.jsonl');
    await writeFile(log, `${history.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const fromDoc = only(await collect(convertFile(doc)));
    expect(fromDoc.task.id).toBe('django__django-11099');
    expect(fromDoc.metadata.source).toEqual({ format: 'openhands-v1', file: doc });
    for (const path of [events, log]) {
      expect((await detectFormat(path)).adapter?.name).toBe('openhands-v1');
      const t = only(await collect(convertFile(path)));
      expect(tools(t)).toEqual(tools(fromDoc));
      expect(t.steps.map((s) => s.observation)).toEqual(fromDoc.steps.map((s) => s.observation));
      expect(t.task.instruction).toBe(fromDoc.task.instruction);
    }
    expect(only(await collect(convertFile(events))).task.id).toBe('events');
  });

  it('reports events it cannot place, and a line that is not a run', async () => {
    const dir = await tempDir();
    const path = join(dir, 'odd.jsonl');
    const orphan = { id: 'o1', timestamp: '2026-01-01T00:00:00', source: 'environment', tool_name: 'terminal', tool_call_id: 'nope', observation: { content: [], is_error: false, kind: 'TerminalObservation' }, action_id: 'x', kind: 'ObservationEvent' };
    await writeFile(path, `${JSON.stringify({ instance_id: 'a', attempt: 1, test_result: {}, history: [orphan, 7] })}\n${JSON.stringify({ instance_id: 'b' })}\n`);
    const c = await collect(convertFile(path, { format: 'openhands-v1' }));
    expect(c.trajectories.map((t) => t.task.id)).toEqual(['a']);
    expect(c.problems.map((p) => [p.line, p.path, p.severity])).toEqual([
      [1, '$.history[0]', 'warning'],
      [1, '$.history[1]', 'error'],
      [2, '$.history', 'error'],
    ]);
    expect(c.trajectories[0]?.metadata.unmatchedObservations).toHaveLength(1);
  });

  it('reads the verdict a benchmark wrote into test_result', () => {
    expect(testResultVerdict({ resolved: true })).toEqual({ verdict: { success: true }, source: 'test_result.resolved' });
    expect(testResultVerdict({ report: { resolved: false } })).toEqual({ verdict: { success: false }, source: 'test_result.report.resolved' });
    expect(testResultVerdict({ score: 0.5 })).toEqual({ verdict: { success: false, score: 0.5 }, source: 'test_result.score' });
    expect(testResultVerdict({ score: 1 })).toEqual({ verdict: { success: true, score: 1 }, source: 'test_result.score' });
    expect(testResultVerdict({ git_patch: 'diff' })).toEqual({ verdict: {} });
    expect(openHandsV1Adapter.envId).toBe('external/openhands-v1');
  });
});
