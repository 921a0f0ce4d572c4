import { access, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../core/trajectory.js';
import type { ConversionItem } from './adapter.js';
import { problem } from './adapter.js';
import { writeJsonl } from './write.js';

const t = makeTrajectory({
  task: { id: 't', domain: 'generic', instruction: 'x' },
  envId: 'external/test-v0',
  agent: { name: 'a' },
  steps: [],
  outcome: { success: false, score: 0, terminated: false, truncated: false, reason: 'unknown' },
  metadata: {},
});

describe('writeJsonl', () => {
  it('writes trajectories one per line and hands problems to onProblem', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-w-'));
    const out = join(dir, 'o.jsonl');
    const seen: string[] = [];
    const items: ConversionItem[] = [t, problem('f', '$', 'bad'), t];
    expect(await writeJsonl(items, out, { onProblem: (p) => seen.push(p.message) })).toEqual({ written: 2, problems: 1, committed: true });
    expect(seen).toEqual(['bad']);
    expect(await readFile(out, 'utf8')).toBe(`${JSON.stringify(t)}\n${JSON.stringify(t)}\n`);
    await expect(access(`${out}.partial`)).rejects.toThrow();
  });

  it('leaves nothing behind when the source fails, and writes to a stream', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-w-'));
    const out = join(dir, 'o.jsonl');
    async function* failing(): AsyncGenerator<ConversionItem> {
      yield t;
      throw new Error('source broke');
    }
    await expect(writeJsonl(failing(), out)).rejects.toThrow('source broke');
    await expect(access(out)).rejects.toThrow();
    await expect(access(`${out}.partial`)).rejects.toThrow();
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c.toString()));
    await writeJsonl([t], stream);
    expect(chunks.join('')).toBe(`${JSON.stringify(t)}\n`);
  });

  it('keeps an existing output when a conversion fails or, with keepWhenEmpty, converts nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-w-'));
    const out = join(dir, 'o.jsonl');
    await writeFile(out, 'earlier\n');
    async function* failing(): AsyncGenerator<ConversionItem> {
      yield t;
      throw new Error('source broke');
    }
    await expect(writeJsonl(failing(), out)).rejects.toThrow('source broke');
    expect(await writeJsonl([problem('f', '$', 'cannot read')], out, { keepWhenEmpty: true })).toEqual({ written: 0, problems: 1, committed: false });
    expect(await readFile(out, 'utf8')).toBe('earlier\n');
    expect(await readdir(dir)).toEqual(['o.jsonl']);
    expect(await writeJsonl([], out)).toEqual({ written: 0, problems: 0, committed: true });
    expect(await readFile(out, 'utf8')).toBe('');
  });
});
