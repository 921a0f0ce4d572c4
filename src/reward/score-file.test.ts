import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { getProfile } from '../core/profiles/registry.js';
import { parseTrajectory } from '../core/trajectory.js';
import { fitIsotonic } from './calibration/isotonic.js';
import { trajectory } from './__fixtures__/trajectories.js';
import { scoreFile } from './score-file.js';
import type { JudgeLayer } from './types.js';

const coding = getProfile('coding');
let dir = '';

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'gymflow-score-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const good = (n: number): string => JSON.stringify(trajectory([['file_read', { path: `f${n}.py` }], ['submit', {}]], { instruction: `task ${n}` }));

describe('scoreFile', () => {
  it('scores valid lines in order and reports malformed ones with file, line and JSON path', async () => {
    const bad = JSON.parse(good(9)) as { steps: { action: { tool: unknown } }[] };
    (bad.steps[0] as { action: { tool: unknown } }).action.tool = null;
    const input = path.join(dir, 'runs.jsonl');
    await writeFile(input, [good(1), '{not json', JSON.stringify(bad), '', good(2), good(3), ''].join('\n'));
    const out = path.join(dir, 'scored.jsonl');
    const summary = await scoreFile(input, out, { profile: coding, label: 'runs.jsonl' });
    expect(summary.scored).toBe(3);
    expect(summary.skipped).toBe(2);
    expect(summary.errors[0]).toMatch(/^runs\.jsonl:2 \$: invalid JSON/);
    expect(summary.errors[1]).toBe('runs.jsonl:3 $.steps[0].action.tool: Invalid input: expected string, received null');
    const lines = (await readFile(out, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(3);
    const scored = lines.map((l, i) => parseTrajectory(JSON.parse(l), `scored.jsonl:${i + 1}`));
    expect(scored.map((t) => t.task.instruction)).toEqual(['task 1', 'task 2', 'task 3']);
    expect(scored.every((t) => t.reward !== undefined && t.steps.every((s) => s.reward !== undefined))).toBe(true);
    expect(await readdir(dir)).toEqual(['runs.jsonl', 'scored.jsonl']);
  });

  it('keeps input order with concurrent scoring', async () => {
    const input = path.join(dir, 'in.jsonl');
    await writeFile(input, `${Array.from({ length: 20 }, (_, i) => good(i)).join('\n')}\n`);
    let calls = 0;
    const judge: JudgeLayer = {
      name: 'slow',
      judge: async (t) => {
        calls++;
        // Later trajectories finish first.
        await new Promise((r) => setTimeout(r, 40 - Number(t.task.instruction.split(' ')[1]) * 2));
        return [];
      },
      usage: () => ({ requests: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, failures: 0 }),
    };
    const profile = getProfile('advisory');
    const out = path.join(dir, 'out.jsonl');
    const summary = await scoreFile(input, out, { profile, judge, concurrency: 8 });
    expect(summary).toEqual({ scored: 20, skipped: 0, errors: [], written: true });
    expect(calls).toBe(20);
    const order = (await readFile(out, 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { task: { instruction: string } }).task.instruction);
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => `task ${i}`));
  });

  it('leaves no output and no temporary file when scoring fails', async () => {
    const input = path.join(dir, 'in.jsonl');
    await writeFile(input, [good(1), good(2), good(3)].join('\n'));
    const out = path.join(dir, 'out.jsonl');
    let n = 0;
    const judge: JudgeLayer = {
      name: 'failing',
      judge: () => (++n === 2 ? Promise.reject(new Error('judge down')) : Promise.resolve([])),
      usage: () => ({ requests: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, failures: 1 }),
    };
    await expect(scoreFile(input, out, { profile: getProfile('advisory'), judge, concurrency: 2 })).rejects.toThrow('judge down');
    expect(await readdir(dir)).toEqual(['in.jsonl']);
  });

  it('keeps an existing output untouched on failure and replaces it on success', async () => {
    const input = path.join(dir, 'in.jsonl');
    const out = path.join(dir, 'out.jsonl');
    await writeFile(out, 'previous\n');
    await expect(scoreFile(path.join(dir, 'missing.jsonl'), out, { profile: coding })).rejects.toThrow(ConfigError);
    expect(await readFile(out, 'utf8')).toBe('previous\n');
    await writeFile(input, good(1));
    await scoreFile(input, out, { profile: coding });
    expect((await readFile(out, 'utf8')).trim().split('\n')).toHaveLength(1);
    expect((await readdir(dir)).sort()).toEqual(['in.jsonl', 'out.jsonl']);
  });

  it('can score a file in place', async () => {
    const file = path.join(dir, 'runs.jsonl');
    await writeFile(file, `${good(1)}\n${good(2)}\n`);
    expect(await scoreFile(file, file, { profile: coding })).toEqual({ scored: 2, skipped: 0, errors: [], written: true });
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(lines.every((l) => (JSON.parse(l) as { reward?: unknown }).reward !== undefined)).toBe(true);
  });

  it('leaves a file with an invalid line unchanged instead of scoring it in place, which would drop the line', async () => {
    const file = path.join(dir, 'runs.jsonl');
    const text = `${good(1)}\n{truncated\n${good(2)}\n`;
    await writeFile(file, text);
    const link = path.join(dir, 'link.jsonl');
    await symlink(file, link);
    for (const out of [file, link]) {
      const summary = await scoreFile(file, out, { profile: coding, label: 'runs.jsonl' });
      expect(summary).toMatchObject({ scored: 2, skipped: 1, written: false });
      expect(summary.errors[0]).toMatch(/^runs\.jsonl:2 \$: invalid JSON/);
      expect(await readFile(file, 'utf8')).toBe(text);
    }
    expect((await readdir(dir)).sort()).toEqual(['link.jsonl', 'runs.jsonl']);
    // Into another file, the valid lines are written as usual.
    const other = path.join(dir, 'scored.jsonl');
    expect(await scoreFile(file, other, { profile: coding })).toMatchObject({ scored: 2, skipped: 1, written: true });
    expect((await readFile(other, 'utf8')).trim().split('\n')).toHaveLength(2);
  });

  it('rejects a bad concurrency', async () => {
    await expect(scoreFile('x', 'y', { profile: coding, concurrency: 0 })).rejects.toThrow(/concurrency must be a positive integer/);
  });
});

describe('scoreFile in worker threads', () => {
  /**
   * 700 lines: varied trajectories, a line that is not JSON every 97 lines and one that fails the schema every
   * 89, blank lines every 50, so problems land in several batches and on their edges; and what reading must get
   * right in pieces: a byte-order mark, CRLF and lone CR line breaks, bytes that are not UTF-8, a line of three
   * reads (1 MiB each), and no line break at the end.
   */
  async function mixedFile(): Promise<string> {
    const lines: string[] = [];
    for (let i = 1; i <= 700; i++) {
      if (i % 97 === 0) lines.push('{not json');
      else if (i % 89 === 0) lines.push(JSON.stringify({ ...JSON.parse(good(i)), steps: 'none' }));
      else if (i % 50 === 0) lines.push('  ');
      else {
        const observation = i === 321 ? 'x'.repeat(3_000_000) : 'ok';
        const t = trajectory([['file_read', { path: `f${i % 7}.py` }, observation], ['file_read', { path: `f${i % 7}.py` }], ['shell', { command: `pytest -k t${i % 5}` }], ['submit', {}]], { instruction: `task ${i} é` });
        lines.push(JSON.stringify(t));
      }
    }
    const breaks = (i: number): string => (i % 11 === 0 ? '\r\n' : i % 13 === 0 ? '\r' : '\n');
    const text = lines.map((l, i) => (i === lines.length - 1 ? l : `${l}${breaks(i)}`)).join('');
    const input = path.join(dir, 'runs.jsonl');
    // Line 401, a trajectory, starts with bytes that are not UTF-8: invalid JSON.
    const at = text.indexOf(lines[400] as string);
    await writeFile(input, Buffer.concat([Buffer.from(`\uFEFF${text.slice(0, at)}`), Buffer.from([0xff, 0xc3]), Buffer.from(text.slice(at))]));
    return input;
  }

  it('writes what one thread writes, byte for byte, and reports the same problems at the same lines', async () => {
    const input = await mixedFile();
    const one = await scoreFile(input, path.join(dir, 'one.jsonl'), { profile: coding, label: 'runs.jsonl' });
    const three = await scoreFile(input, path.join(dir, 'three.jsonl'), { profile: coding, label: 'runs.jsonl', workers: 3 });
    expect(three).toEqual(one);
    expect(one.scored).toBe(700 - 7 - 7 - 14 - 1);
    expect(one.skipped).toBe(15);
    expect(one.errors.filter((e) => e.startsWith('runs.jsonl:401 $: invalid JSON'))).toHaveLength(1);
    expect(one.errors.filter((e) => e.startsWith('runs.jsonl:291 $: invalid JSON'))).toHaveLength(1);
    expect(one.errors.filter((e) => e.startsWith('runs.jsonl:267 $.steps: '))).toHaveLength(1);
    expect(await readFile(path.join(dir, 'three.jsonl'), 'utf8')).toBe(await readFile(path.join(dir, 'one.jsonl'), 'utf8'));
  });

  it('applies a calibration and a reference length in every thread', async () => {
    const input = await mixedFile();
    const calibration = fitIsotonic([{ x: 0, y: 0.2 }, { x: 0.5, y: 0.3 }, { x: 1, y: 0.9 }]);
    const options = { profile: coding, calibration, referenceSteps: 2 };
    await scoreFile(input, path.join(dir, 'one.jsonl'), options);
    await scoreFile(input, path.join(dir, 'two.jsonl'), { ...options, workers: 2 });
    const two = await readFile(path.join(dir, 'two.jsonl'), 'utf8');
    expect(two).toBe(await readFile(path.join(dir, 'one.jsonl'), 'utf8'));
    // The calibration's layer: what it moved the total by.
    expect(two).toContain('"human":');
  });

  it('fails as one thread does when scoring fails, leaving an existing output as it was', async () => {
    const input = await mixedFile();
    const out = path.join(dir, 'out.jsonl');
    await writeFile(out, 'kept\n');
    const error = await scoreFile(input, out, { profile: coding, referenceSteps: -1, workers: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toMatch(/referenceSteps must be a finite number > 0, got -1/);
    expect(await readFile(out, 'utf8')).toBe('kept\n');
    expect((await readdir(dir)).sort()).toEqual(['out.jsonl', 'runs.jsonl']);
  });

  it('refuses a judge, a learned model and a bad count before writing anything', async () => {
    const input = await mixedFile();
    const out = path.join(dir, 'out.jsonl');
    const judge: JudgeLayer = { name: 'j', judge: () => Promise.resolve([]), usage: () => ({ requests: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, failures: 0 }) };
    await expect(scoreFile(input, out, { profile: coding, judge, workers: 2 })).rejects.toThrow(/workers: a judge scores in one thread .* raise concurrency/);
    await expect(scoreFile(input, out, { profile: coding, learned: { scorer: { name: 'm', scoreSteps: (t) => Promise.resolve(new Float64Array(t.steps.length)) }, weight: 1 }, workers: 2 })).rejects.toThrow(/workers: a learned reward model scores in one thread/);
    await expect(scoreFile(input, out, { profile: coding, workers: 1.5 })).rejects.toThrow(/workers must be a positive integer, or 0 for one per core; got 1.5/);
    expect(await readdir(dir)).toEqual(['runs.jsonl']);
  });
});
