import { writeFile, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collect, convertFixture, fixture, step, tools } from '../__fixtures__/fixtures.js';
import { openHandsResolverAdapter } from './openhands-resolver.js';

describe('openhands-resolver adapter', () => {
  it('one trajectory per line, with the resolver verdict', async () => {
    const c = await convertFixture(openHandsResolverAdapter, 'openhands/resolver-output.jsonl');
    expect(c.problems).toEqual([]);
    expect(c.trajectories).toHaveLength(2);
    const [license, dark] = c.trajectories;
    if (!license || !dark) throw new Error('missing trajectories');
    expect(license.task.id).toBe('neubig/pr-viewer#5');
    expect(license.task.instruction).toMatch(/^Please fix the following issue for the repository in \/workspace\./);
    expect(tools(license)).toEqual(['execute_bash', 'execute_ipython_cell', 'execute_bash', 'finish']);
    expect(step(license, 0).action.params).toEqual({ command: 'touch LICENSE' });
    expect(step(license, 0).thought).toMatch(/^Certainly! I'll add the MIT license/);
    expect(String(step(license, 1).action.params.code)).toMatch(/^mit_license = """MIT License/);
    expect(step(license, 2).observation).toContain('MIT License');
    expect(license.outcome).toEqual({ success: true, score: 1, terminated: true, truncated: false, reason: 'finished' });
    expect((license.metadata.metrics as { accumulated_cost: number }).accumulated_cost).toBe(0.070713);
    expect(license.metadata.source).toMatchObject({ format: 'openhands-resolver', line: 1 });
    expect(dark.task.id).toBe('neubig/pr-viewer#1');
    expect(dark.steps).toHaveLength(22);
    expect(step(dark, 0).action).toEqual({ tool: 'execute_bash', params: { command: 'ls -R /workspace' } });
    expect(tools(dark).slice(1, 21).every((x) => x === 'execute_ipython_cell')).toBe(true);
    expect(step(dark, 21).action.tool).toBe('finish');
    expect(dark.metadata.source).toMatchObject({ line: 2 });
  });

  it('reports a malformed line with its number and converts the rest', async () => {
    const lines = (await readFile(fixture('openhands/resolver-output.jsonl'), 'utf8')).split('\n').filter((l) => l.trim() !== '');
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-resolver-'));
    const path = join(dir, 'output.jsonl');
    await writeFile(path, [lines[0], '{"history": [', '', '{"history": 3}', lines[1]].join('\n'));
    const c = await collect(openHandsResolverAdapter.convert(path, { file: path, options: {} }));
    expect(c.trajectories.map((t) => t.task.id)).toEqual(['neubig/pr-viewer#5', 'neubig/pr-viewer#1']);
    expect(c.errors.map((p) => [p.line, p.path])).toEqual([[2, '$'], [4, '$.history']]);
    expect(c.errors[0]?.message).toMatch(/invalid JSON/);
    expect(c.trajectories[1]?.metadata.source).toMatchObject({ line: 5 });
  });
});
