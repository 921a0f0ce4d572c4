import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collect, convertFixture } from '../__fixtures__/fixtures.js';
import { anthropicMessagesAdapter } from './anthropic-messages.js';
import { gymflowAdapter } from './gymflow.js';

describe('gymflow adapter', () => {
  it('passes valid trajectories through unchanged and reports bad lines with their JSON path', async () => {
    const { trajectories } = await convertFixture(anthropicMessagesAdapter, 'anthropic-messages/pydantic-ai-cassette-sonnet-4.5-sequential-tools.yaml');
    const good = trajectories[0];
    if (!good) throw new Error('no trajectory');
    const badTool = JSON.parse(JSON.stringify(good)) as { steps: { action: { tool: unknown } }[] };
    (badTool.steps[1] as { action: { tool: unknown } }).action.tool = null;
    const badId = { ...good, id: `sha256:${'0'.repeat(64)}` };
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-pass-'));
    const path = join(dir, 'trajectories.jsonl');
    await writeFile(path, [JSON.stringify(good), JSON.stringify(badTool), '', JSON.stringify(badId), JSON.stringify(good)].join('\n') + '\n');
    const c = await collect(gymflowAdapter.convert(path, { file: path, options: {} }));
    expect(c.trajectories).toEqual([good, good]);
    expect(c.errors.map((p) => [p.line, p.path])).toEqual([[2, '$.steps[1].action.tool'], [4, '$.id']]);
    expect(c.errors[1]?.message).toContain(good.id);
  });
});
