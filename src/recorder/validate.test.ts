import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertFixture } from './__fixtures__/fixtures.js';
import { openAiChatAdapter } from './adapters/openai-chat.js';
import { formatValidationReport, validateFile } from './validate.js';

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
