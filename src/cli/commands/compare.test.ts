import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compare, type CompareResult } from '../../eval/compare.js';
import { evalResultOf } from '../../eval/__fixtures__/results.js';
import { registerBuiltinEnvs } from '../../envs/index.js';
import { runCommand } from './__fixtures__/run-command.js';
import { compareCommand, formatCompareTables } from './compare.js';
import { evalCommand } from './eval.js';

const run = (...args: string[]): Promise<string> => runCommand([evalCommand, compareCommand], ...args);

const dir = mkdtempSync(join(tmpdir(), 'gymflow-compare-'));
const expert = join(dir, 'expert.json');
const random = join(dir, 'random.json');

beforeAll(async () => {
  registerBuiltinEnvs();
  await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '30', '--out', expert);
  await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'random', '-n', '30', '--out', random);
});

describe('gymflow compare', () => {
  it('finds expert and random on gymflow/tool-use-v0 significantly different in reward and success', async () => {
    for (const metric of ['reward', 'success']) {
      const report = JSON.parse(await run('compare', random, expert, '--metric', metric, '--json')) as CompareResult;
      expect(report.leaderboard.map((r) => [r.label, r.mark, r.beats])).toEqual([
        ['expert', '*', ['random']],
        ['random', '', []],
      ]);
      const c = report.comparisons[0];
      expect(c).toMatchObject({ a: 'random', b: 'expert', significant: true });
      expect(c?.difference).toBeLessThan(-0.9);
      expect(c?.welch.pHolm).toBeLessThan(1e-6);
      expect(c?.mannWhitney.pHolm).toBeLessThan(1e-6);
      expect(c?.paired?.tasks).toBe(30);
      expect(c?.bootstrap.design).toBe('paired-tasks');
      expect(c?.bootstrap.high).toBeLessThan(0);
    }
  });

  it('prints a leaderboard and a pairwise table, and writes Markdown', async () => {
    const md = join(dir, 'compare.md');
    const text = await run('compare', expert, random, '--markdown', md);
    expect(text).toMatch(/gymflow\/tool-use-v0 \(heldout\) metric=reward \(higher is better\)/);
    expect(text).toMatch(/^\s+1\s+expert\s+1\s+\[1, 1\]\s+30\s+\*\s+random$/m);
    expect(text).toMatch(/expert - random .* paired-tasks .* yes$/m);
    expect(text).toMatch(/\* = significantly better than the next-ranked agent; welch test, Holm-adjusted p < 0.05 over 1 comparison/);
    expect(readFileSync(md, 'utf8')).toMatch(/^\| 1 \| expert \| 1 \| \[1, 1\] \| 30 \| \* \| random \|$/m);

    // An existing report is replaced only with --force; an input, never.
    writeFileSync(md, 'notes\n');
    await expect(run('compare', expert, random, '--markdown', md)).rejects.toThrow(`output ${md} already exists (pass --force to replace it, or choose another path)`);
    expect(readFileSync(md, 'utf8')).toBe('notes\n');
    const result = readFileSync(random, 'utf8');
    await expect(run('compare', expert, random, '--markdown', random, '--force')).rejects.toThrow(`--markdown ${random}: is the input ${random}`);
    expect(readFileSync(random, 'utf8')).toBe(result);
    await run('compare', expert, random, '--markdown', md, '--force');
    expect(readFileSync(md, 'utf8')).toMatch(/^\| 1 \| expert \|/m);
  });

  it('supports baseline mode and another primary test', async () => {
    const again = join(dir, 'expert-again.json');
    copyFileSync(expert, again);
    const report = JSON.parse(await run('compare', random, expert, again, '--baseline', '--test', 'paired', '--json')) as CompareResult;
    expect(report).toMatchObject({ mode: 'baseline', primary: 'paired' });
    // Two results share the spec `expert`, so their file names label them; random is the baseline.
    expect(report.comparisons.map((c) => [c.a, c.b, c.significant])).toEqual([
      ['random', 'expert', true],
      ['random', 'expert-again', true],
    ]);
    expect(report.leaderboard.map((r) => [r.label, r.mark])).toEqual([
      ['expert', '*'],
      ['expert-again', '*'],
      ['random', ''],
    ]);
    // The same file twice falls back to spec#k labels.
    const twice = JSON.parse(await run('compare', expert, expert, '--json')) as CompareResult;
    expect(twice.leaderboard.map((r) => r.label)).toEqual(['expert#1', 'expert#2']);
  });

  it('names the file that is not an eval result, and a bad metric', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"format": "something else"}');
    await expect(run('compare', expert, bad)).rejects.toThrow(/bad\.json \$\.format: /);
    writeFileSync(bad, 'not json');
    await expect(run('compare', expert, bad)).rejects.toThrow(/bad\.json \$: invalid JSON/);
    await expect(run('compare', expert, join(dir, 'missing.json'))).rejects.toThrow(/cannot read eval result .*missing\.json/);
    await expect(run('compare', expert, random, '--metric', 'vibes')).rejects.toThrow(/expected one of success, score, reward, .*got 'vibes'/);
    await expect(run('compare', expert)).rejects.toThrow(/need at least 2 results \(eval result files or store names\), got 1/);
  });
});

describe('gymflow compare with --trials results', () => {
  it('puts pass^k side by side when every result has it, and leaves it out otherwise', async () => {
    const a = join(dir, 'expert-trials.json');
    const b = join(dir, 'random-trials.json');
    await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '6', '--trials', '2', '--resamples', '200', '--out', a);
    await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'random', '-n', '6', '--trials', '2', '--resamples', '200', '--out', b);
    const md = join(dir, 'trials.md');
    const text = await run('compare', a, b, '--metric', 'success', '--markdown', md);
    expect(text).toMatch(/^agent\s+pass\^1\s+pass\^2$/m);
    expect(text).toMatch(/^expert\s+1 \[1, 1\]\s+1 \[1, 1\]$/m);
    expect(text).toMatch(/^random\s+0 \[0, 0\]\s+0 \[0, 0\]$/m);
    expect(text).toContain('pass^k from each result (95% bootstrap over tasks)');
    expect(readFileSync(md, 'utf8')).toContain('| expert | 1 [1, 1] | 1 [1, 1] |');
    const report = JSON.parse(await run('compare', a, b, '--json')) as CompareResult;
    expect(report.leaderboard.map((r) => r.passK?.map((p) => p.value))).toEqual([[1, 1], [0, 0]]);
    // One result without trials: no pass^k table.
    expect(await run('compare', a, random)).not.toContain('pass^');
  });
});

describe('gymflow eval --save and compare by store name', () => {
  it('stores results as eval artifacts and compares them by name', async () => {
    const store = join(dir, 'store');
    expect(await run('eval', '--env', 'gymflow/text-math-v0', '--agent', 'expert', '-n', '10', '--save', 'eval/expert', '--store', store)).toMatch(/result stored as sha256:[0-9a-f]{64} \(eval\/expert\)/);
    await run('eval', '--env', 'gymflow/text-math-v0', '--agent', 'random', '-n', '10', '--save', 'eval/random', '--store', store);
    const report = JSON.parse(await run('compare', 'eval/expert', 'eval/random', '--store', store, '--metric', 'success', '--json')) as CompareResult;
    expect(report.leaderboard.map((r) => r.label)).toEqual(['expert', 'random']);
    await expect(run('compare', 'eval/nope', 'eval/random', '--store', store)).rejects.toThrow(/cannot read eval result eval\/nope: not a file, and not in the store/);
  });
});

describe('formatCompareTables', () => {
  it('marks a Mann–Whitney p-value from the exact distribution, and says what the mark means', () => {
    // 5 vs 5 rewards without ties: exact; scipy.stats.mannwhitneyu([.9,.8,.7,.95,.85], [.1,.2,.3,.15,.25]) -> p = 2/252
    const text = formatCompareTables(compare([evalResultOf('a', [0.9, 0.8, 0.7, 0.95, 0.85]), evalResultOf('b', [0.1, 0.2, 0.3, 0.15, 0.25])], { resamples: 100 }));
    expect(text).toMatch(/^a - b .* 0\.0079 \(0\.0079\) exact /m);
    expect(text).toMatch(/^MWU p marked exact: the exact null distribution of U \(no ties, a group of at most 8\); unmarked: the normal approximation$/m);
  });

  it('prints asymptotic p-values unmarked and no note when every one is asymptotic (ties)', () => {
    const text = formatCompareTables(compare([evalResultOf('a', [1, 1, 0.5, 1, 1]), evalResultOf('b', [0, 0.5, 0, 0, 0.5])], { resamples: 100 }));
    expect(text).not.toMatch(/exact/);
  });
});
