import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertFixture, fixture } from './__fixtures__/fixtures.js';
import { openAiChatAdapter } from './adapters/openai-chat.js';
import { formatValidationReport, validateFile, validateLog } from './validate.js';

describe('validateFile', () => {
  it('reports every problem as file:line $.path: message', async () => {
    const [good] = (await convertFixture(openAiChatAdapter, 'openai-chat/pydantic-ai-cassette-gpt-4o-tool-retry.yaml')).trajectories;
    if (!good) throw new Error('no trajectory');
    const broken = JSON.parse(JSON.stringify(good)) as Record<string, unknown> & { steps: Record<string, unknown>[]; outcome: Record<string, unknown> };
    (broken.steps[2] as Record<string, unknown>).startedAt = 'yesterday';
    broken.outcome.truncated = true; // both flags set
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-validate-'));
    const file = join(dir, 't.jsonl');
    await writeFile(file, `${JSON.stringify(good)}\n\n{oops\n${JSON.stringify(broken)}\n`);
    const report = await validateFile(file);
    expect(report).toMatchObject({ records: 3, valid: 1 });
    const lines = formatValidationReport(report);
    expect(lines[0]).toMatch(new RegExp(`^${escape(file)}:3 \\$: invalid JSON`));
    expect(lines).toContain(`${file}:4 $.steps[2].startedAt: Invalid ISO datetime`);
    expect(lines.some((l) => l.startsWith(`${file}:4 $.outcome: terminated and truncated are both true`))).toBe(true);
  });

  it('reports a missing file', async () => {
    const report = await validateFile('/nonexistent/gymflow.jsonl');
    expect(report.problems[0]?.message).toMatch(/cannot read file/);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('validateLog', () => {
  it('checks an agent log against its detected format, and a broken line by file, line and path', async () => {
    const session = fixture('claude-code/session-v2.1.17-permission-denials.jsonl');
    expect(await validateLog(session)).toMatchObject({ format: 'claude-code', records: 1, valid: 1, problems: [] });
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-validate-log-'));
    const broken = join(dir, 'session.jsonl');
    const lines = (await readFile(session, 'utf8')).split('\n');
    lines[5] = '{oops';
    await writeFile(broken, lines.join('\n'));
    const report = await validateLog(broken, { format: 'claude-code' });
    expect(report.format).toBe('claude-code');
    expect(report.problems.find((p) => p.severity === 'error')).toMatchObject({ file: broken, line: 6, path: '$' });
  });

  it('validates gymflow JSONL (and what no adapter recognises) line by line, and a directory by its files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-validate-log-'));
    await writeFile(join(dir, 'x.jsonl'), '{"not": "a trajectory"}\n');
    const report = await validateLog(join(dir, 'x.jsonl'));
    expect(report).toMatchObject({ format: 'gymflow', records: 1, valid: 0 });
    expect(report.problems[0]).toMatchObject({ line: 1 });
    const all = await validateLog(fixture('swe-agent'));
    expect(all).toMatchObject({ format: null, records: 4, valid: 4 });
    await expect(validateLog(fixture('swe-agent'), { signal: AbortSignal.abort() })).rejects.toThrow(/validate: cancelled after 0 trajectories/);
  });
});
