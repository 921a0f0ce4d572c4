import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CountdownEnv } from '../../core/__fixtures__/countdown-env.js';
import { ConfigError } from '../../core/errors.js';
import { listEnvs, register } from '../../core/registry.js';
import { registerBuiltinEnvs } from '../../envs/index.js';
import { RandomAgent } from '../../policy/random.js';
import type { CollectProgress } from '../../hub/collect.js';
import type { LineageNode } from '../../hub/store/lineage.js';
import { collectCommand, isFileOutput, progressLine, progressReporter } from './collect.js';
import { runCommand } from './__fixtures__/run-command.js';
import { exportCommand } from './export.js';
import { parseDuration, storeCommand } from './store.js';

/** Runs `gymflow <args>` against the three hub commands, capturing stdout. */
const run = (...args: string[]): Promise<string> => runCommand([storeCommand, collectCommand, exportCommand], ...args);

beforeAll(() => registerBuiltinEnvs());
afterEach(() => {
  process.exitCode = undefined;
});

describe('gymflow collect / export / store', () => {
  it('collects into the store, exports with lineage, and inspects the store', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'gymflow-cli-store-'));
    const col = JSON.parse(await run('collect', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '6', '--group-size', '2', '--concurrency', '3', '--seed', '4', '-o', 'rollouts/expert', '--store', root, '--json', '--no-progress')) as {
      ref: string;
      summary: { episodes: number; successRate: number };
    };
    expect(col.summary).toMatchObject({ episodes: 12, successRate: 1 });

    const outDir = path.join(await mkdtemp(path.join(tmpdir(), 'gymflow-cli-out-')), 'hf');
    const exp = JSON.parse(
      await run('export', '--format', 'hf', '--in', 'rollouts/expert', '-o', outDir, '--split-by-task', 'train=0.5,test=0.5', '--name', 'datasets/sft', '--store', root, '--json'),
    ) as { ref: string; records: number; splits: Record<string, number> };
    expect(exp.records).toBe(12);
    expect((await readdir(outDir)).sort()).toEqual(['README.md', 'data']);

    const tree = JSON.parse(await run('store', 'lineage', 'datasets/sft', '--store', root, '--json')) as LineageNode;
    expect(tree.entry?.kind).toBe('dataset');
    expect(tree.parents[0]?.entry?.kind).toBe('trajectories');
    expect(tree.parents[0]?.parents[0]?.entry?.kind).toBe('task-set');
    const text = await run('store', 'lineage', 'datasets/sft', '--store', root);
    expect(text).toMatch(/dataset \[datasets\/sft\][\s\S]*└─ sha256:[0-9a-f]{12} trajectories \[rollouts\/expert\][\s\S]* {3}└─ sha256:[0-9a-f]{12} task-set/);

    const ls = JSON.parse(await run('store', 'ls', '--store', root, '--json')) as { artifacts: { kind: string }[]; refs: { name: string }[] };
    expect(ls.artifacts.map((a) => a.kind).sort()).toEqual(['dataset', 'task-set', 'trajectories']);
    expect(ls.refs.map((r) => r.name)).toEqual(['datasets/sft', 'rollouts/expert']);
    expect(await run('store', 'ls', '--store', root)).toMatch(/trajectories .* rollouts\/expert/);
    const show = JSON.parse(await run('store', 'show', 'rollouts/expert', '--store', root, '--json')) as { meta: { count: number } };

    // checkout: the dataset tree as a directory equal to what export wrote, the rollouts as a file.
    const coDir = await mkdtemp(path.join(tmpdir(), 'gymflow-cli-co-'));
    const co = JSON.parse(await run('store', 'checkout', 'datasets/sft', path.join(coDir, 'sft'), '--store', root, '--json')) as { kind: string; files: number };
    const exported = (await readdir(outDir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.relative(outDir, path.join(e.parentPath, e.name)));
    expect(co).toMatchObject({ kind: 'dataset', files: exported.length });
    for (const rel of exported) expect(await readFile(path.join(coDir, 'sft', rel), 'utf8')).toBe(await readFile(path.join(outDir, rel), 'utf8'));
    expect(await run('store', 'checkout', 'rollouts/expert', path.join(coDir, 'rollouts.jsonl'), '--store', root)).toMatch(/trajectories -> .*rollouts\.jsonl \(12 trajectories, /);
    const lines = (await readFile(path.join(coDir, 'rollouts.jsonl'), 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as { steps: unknown[]; outcome: { success: boolean } });
    expect(lines.map((t) => t.outcome.success)).toEqual(new Array(12).fill(true));
    expect(lines.every((t) => t.steps.length > 0)).toBe(true);
    await expect(run('store', 'checkout', 'rollouts/expert', path.join(coDir, 'sft'), '--store', root)).rejects.toThrow(/sft already exists/);
    expect(show.meta.count).toBe(12);

    const verify = JSON.parse(await run('store', 'verify', '--store', root, '--json')) as { ok: boolean };
    expect(verify.ok).toBe(true);

    // prune: every spec is resolved first, so a typo prunes nothing; then the rollouts' content is released.
    await expect(run('store', 'prune', 'rollouts/expert', 'rollouts/exprt', '--store', root)).rejects.toThrow(/rollouts\/exprt/);
    expect(await run('store', 'ls', '--store', root)).not.toMatch(/pruned/);
    expect(await run('store', 'prune', 'rollouts/expert', '--store', root)).toMatch(/^pruned sha256:[0-9a-f]{12} trajectories \(rollouts\/expert\)\nrun `gymflow store gc`/);
    expect(await run('store', 'ls', '--store', root)).toMatch(/trajectories \(pruned\) .* rollouts\/expert/);
    expect(await run('store', 'show', 'rollouts/expert', '--store', root)).toMatch(/\npruned: {3}\d{4}-/);
    await expect(run('store', 'checkout', 'rollouts/expert', path.join(coDir, 'again.jsonl'), '--store', root)).rejects.toThrow(/\(rollouts\/expert\) was pruned at/);
    const pruned = JSON.parse(await run('store', 'gc', '--grace', '0', '--store', root, '--json')) as { deletedArtifacts: string[]; deletedObjects: number };
    expect(pruned).toMatchObject({ deletedArtifacts: [] });
    expect(pruned.deletedObjects).toBeGreaterThan(0);
    expect(JSON.parse(await run('store', 'verify', '--store', root, '--json'))).toMatchObject({ ok: true });
    expect(await run('store', 'lineage', 'datasets/sft', '--store', root)).toMatch(/└─ sha256:[0-9a-f]{12} trajectories \(pruned\) \[rollouts\/expert\]/);

    await run('store', 'untag', 'datasets/sft', '--store', root);
    const gc = JSON.parse(await run('store', 'gc', '--grace', '0', '--store', root, '--json')) as { deletedArtifacts: string[] };
    expect(gc.deletedArtifacts).toEqual([exp.ref]);
    expect(process.exitCode).toBeUndefined();

    // A ref file that holds no ref is left out of ls and of lineage's names, each saying so on stderr.
    await writeFile(path.join(root, 'refs', 'broken'), 'not a ref\n');
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await run('store', 'ls', '--store', root)).toMatch(/rollouts\/expert/);
      expect(await run('store', 'lineage', 'rollouts/expert', '--store', root)).toMatch(/\[rollouts\/expert\]/);
      const warned = stderr.mock.calls.map((c) => String(c[0])).filter((m) => /^warning: .*refs\/broken holds no ref/.test(m));
      expect(warned).toHaveLength(2);
    } finally {
      stderr.mockRestore();
    }
  }, 60_000);

  it('collects to a JSONL file and exports sft / dpo / rl / benchmark from it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-cli-file-'));
    const file = path.join(dir, 'mixed.jsonl');
    await run('collect', '--env', 'gymflow/tool-use-v0', '--agent', 'random', '-n', '8', '--group-size', '3', '--max-steps', '3', '-o', file, '--no-progress', '--json');
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(24);
    // The random agent solves no task: a benchmark has no record and DPO no pair, which is an error, not an empty file.
    await expect(run('export', '--format', 'benchmark', '--in', file, '-o', path.join(dir, 'benchmark.jsonl'))).rejects.toThrow(/0 benchmark records \(unsolvedTasks=8\)/);
    await expect(run('export', '--format', 'dpo', '--in', file, '-o', path.join(dir, 'dpo.jsonl'), '--min-margin', '0.01')).rejects.toThrow(/0 dpo records \(pairs=0/);
    for (const format of ['sft', 'rl']) {
      const out = path.join(dir, `${format}.jsonl`);
      const report = JSON.parse(await run('export', '--format', format, '--in', file, '-o', out, '--min-margin', '0.01', '--json')) as { records: number; format: string };
      expect(report.format).toBe(format);
      const lines = (await readFile(out, 'utf8')).split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(report.records);
    }
    await expect(run('export', '--format', 'sft', '--in', file, '-o', path.join(dir, 'sft.jsonl'))).rejects.toThrow(/already exists/);
    await expect(run('export', '--format', 'sft', '--in', file, '-o', path.join(dir, 'x'), '--split-by-task', 'train=0.5')).rejects.toThrow(/sum to 0.5/);
    // --force never deletes an input, the working directory or a device; -o - is stdout.
    const raw = await readFile(file, 'utf8');
    await expect(run('export', '--format', 'hf', '--in', file, '-o', dir, '--force')).rejects.toThrow(`output ${dir} holds the input ${file}; --force would delete it`);
    await expect(run('export', '--format', 'sft', '--in', file, '-o', file, '--force')).rejects.toThrow(`output ${file} is the input ${file}`);
    const cwd = process.cwd();
    const outer = await mkdtemp(path.join(tmpdir(), 'gymflow-cli-cwd-'));
    await mkdir(path.join(outer, 'sub'));
    try {
      process.chdir(path.join(outer, 'sub'));
      await expect(run('export', '--format', 'hf', '--in', file, '-o', outer, '--force')).rejects.toThrow(`output ${outer} is or holds the working directory`);
    } finally {
      process.chdir(cwd);
    }
    await expect(run('export', '--format', 'sft', '--in', file, '-o', '/dev/null', '--force')).rejects.toThrow('output /dev/null is not a regular file or a directory; it is never replaced');
    expect(await readFile(file, 'utf8')).toBe(raw);
    const piped = await run('export', '--format', 'sft', '--in', file, '-o', '-');
    expect(piped.trim().split('\n').length).toBeGreaterThan(0);
    expect(JSON.parse(piped.split('\n')[0] as string)).toHaveProperty('messages');
    await expect(run('export', '--format', 'sft', '--in', file, '-o', path.join(dir, 'none.jsonl'), '--min-reward', '2')).rejects.toThrow(/^nothing to export: 24 trajectories in, 0 kept by the filters/);
  }, 60_000);

  it('checks the output, the name, the parents and the task ids before the first episode', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'gymflow-cli-pre-'));
    const base = ['collect', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '2', '--no-progress', '--json'];
    await expect(run(...base, '-o', `${root}/`)).rejects.toThrow(`cannot write ${root}/: is a directory`);
    const aFile = path.join(root, 'a-file');
    await mkdir(path.join(root, 'x'));
    const { writeFile } = await import('node:fs/promises');
    await writeFile(aFile, '');
    await expect(run(...base, '-o', path.join(aFile, 'x.jsonl'))).rejects.toThrow(`cannot write ${path.join(aFile, 'x.jsonl')}: ${aFile} is a file, not a directory`);
    await expect(run(...base, '-o', path.join(root, 'x.jsonl'), '--task', 'nope')).rejects.toThrow(/^unknown task id 'nope' for gymflow\/tool-use-v0; known: tool-train-/);
    await expect(run(...base, '-o', path.join(root, 'x.jsonl'), '--parent', 'runs/a')).rejects.toThrow(/--parent records lineage in the store/);
    const store = path.join(root, 'store');
    const first = JSON.parse(await run(...base, '-o', 'runs/a', '--store', store)) as { ref: string };
    await expect(run(...base, '-o', 'runs', '--store', store)).rejects.toThrow(`cannot name 'runs': it is a folder of names in store ${store} (runs/…); choose another name`);
    await expect(run(...base, '-o', 'runs/a/b', '--store', store)).rejects.toThrow(`cannot name 'runs/a/b': 'runs/a' is already a name in store ${store}, so it cannot hold others`);
    await expect(run(...base, '-o', 'runs/b', '--store', store, '--parent', 'nosuch')).rejects.toThrow(/nosuch/);
    // A parent given by name is stored as the ref it names.
    await run(...base, '-o', 'runs/c', '--store', store, '--parent', 'runs/a');
    const tree = JSON.parse(await run('store', 'lineage', 'runs/c', '--store', store, '--json')) as LineageNode;
    expect(tree.parents.map((p) => p.ref)).toContain(first.ref);
  }, 60_000);

  it('never replaces an earlier collection unless --force, and refuses before the first episode', async () => {
    let made = 0;
    if (!listEnvs().some((e) => e.id === 'test/counted-v0')) {
      register('test/counted-v0', () => {
        made++;
        return new CountdownEnv();
      }, { domain: 'generic', description: 'counts the environments made', agents: { expert: () => new RandomAgent({ seed: 0 }) } });
    }
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-cli-again-'));
    const file = path.join(dir, 'runs.jsonl');
    const base = ['collect', '--env', 'test/counted-v0', '--agent', 'expert', '--no-progress', '--json'];
    await run(...base, '-n', '2', '-o', file);
    const first = await readFile(file, 'utf8');
    made = 0;
    await expect(run(...base, '-n', '3', '-o', file)).rejects.toThrow(`output ${file} already exists (pass --force to replace it, or choose another path)`);
    expect(made).toBe(0); // not even the probe: no episode ran
    expect(await readFile(file, 'utf8')).toBe(first);
    await run(...base, '-n', '3', '-o', file, '--force');
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(3);
    // An empty file (mktemp's) holds nothing to lose.
    const empty = path.join(dir, 'empty.jsonl');
    await writeFile(empty, '');
    await run(...base, '-n', '1', '-o', empty);
    expect((await readFile(empty, 'utf8')).trim().split('\n')).toHaveLength(1);

    // A store name: moving it would leave the earlier set to the next gc.
    const store = path.join(dir, 'store');
    const a = JSON.parse(await run(...base, '-n', '2', '-o', 'runs/a', '--store', store)) as { ref: string };
    made = 0;
    await expect(run(...base, '-n', '3', '-o', 'runs/a', '--store', store)).rejects.toThrow(
      `'runs/a' already names ${a.ref.slice(0, 19)} in store ${store} (pass --force to move the name, or choose another name)`,
    );
    expect(made).toBe(0);
    expect((await readFile(path.join(store, 'refs', 'runs', 'a'), 'utf8')).trim()).toBe(a.ref);
    const b = JSON.parse(await run(...base, '-n', '3', '-o', 'runs/a', '--store', store, '--force')) as { ref: string };
    expect(b.ref).not.toBe(a.ref);
    expect((await readFile(path.join(store, 'refs', 'runs', 'a'), 'utf8')).trim()).toBe(b.ref);
  }, 60_000);

  it('never replaces an export or moves its --name unless --force', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-cli-export-again-'));
    const store = path.join(dir, 'store');
    await run('collect', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '2', '-o', 'runs/e', '--store', store, '--no-progress', '--json');
    const out = path.join(dir, 'sft.jsonl');
    const first = JSON.parse(await run('export', '--format', 'sft', '--in', 'runs/e', '-o', out, '--name', 'datasets/sft', '--store', store, '--json')) as { ref: string };
    const other = path.join(dir, 'other.jsonl');
    await expect(run('export', '--format', 'sft', '--in', 'runs/e', '-o', other, '--top', '1', '--name', 'datasets/sft', '--store', store)).rejects.toThrow(
      `'datasets/sft' already names ${first.ref.slice(0, 19)} in store ${store} (pass --force to move the name`,
    );
    await expect(readdir(dir)).resolves.not.toContain('other.jsonl');
    await expect(run('export', '--format', 'sft', '--in', 'runs/e', '-o', out, '--top', '1', '--store', store)).rejects.toThrow(`output ${out} already exists (pass --force to replace it, or choose another path)`);
    const forced = JSON.parse(await run('export', '--format', 'sft', '--in', 'runs/e', '-o', out, '--top', '1', '--name', 'datasets/sft', '--store', store, '--force', '--json')) as { ref: string; records: number };
    expect(forced.records).toBe(1);
    expect((await readFile(out, 'utf8')).trim().split('\n')).toHaveLength(1);
    expect((await readFile(path.join(store, 'refs', 'datasets', 'sft'), 'utf8')).trim()).toBe(forced.ref);
  }, 60_000);

  it('says why episodes failed, and exits 1 when every one did', async () => {
    if (!listEnvs().some((e) => e.id === 'test/unloadable-v0')) {
      register('test/unloadable-v0', () => {
        const env = new CountdownEnv();
        env.reset = () => Promise.reject(new ConfigError('weights.bin: not a model file'));
        return env;
      }, { domain: 'generic', description: 'an environment whose model never loads', agents: { expert: () => new RandomAgent({ seed: 0 }) } });
    }
    const out = path.join(await mkdtemp(path.join(tmpdir(), 'gymflow-cli-fail-')), 'x.jsonl');
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const report = JSON.parse(await run('collect', '--env', 'test/unloadable-v0', '--agent', 'expert', '-n', '3', '-o', out, '--no-progress', '--json')) as { summary: { failures: unknown } };
      expect(report.summary.failures).toEqual({ total: 3, byKind: { CONFIG_ERROR: 3 }, firstMessage: { CONFIG_ERROR: 'weights.bin: not a model file' } });
      expect(stderr.mock.calls.map((c) => String(c[0]))).toContain('failed 3× CONFIG_ERROR, first: weights.bin: not a model file');
      expect(process.exitCode).toBe(1);
    } finally {
      stderr.mockRestore();
    }
  });

  it('reads only from a store that exists, and names a store path that cannot be one', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-cli-nostore-'));
    const missing = path.join(dir, 'nostore');
    await expect(run('store', 'ls', '--store', missing)).rejects.toThrow(`no artifact store at ${missing}: pass --store DIR`);
    await expect(run('export', '--format', 'sft', '--in', path.join(dir, 'typo.jsonl'), '-o', path.join(dir, 'o.jsonl'), '--store', missing)).rejects.toThrow(
      `--in ${path.join(dir, 'typo.jsonl')}: not a file, and not a ref in a store (no artifact store at ${missing}`,
    );
    expect(await readdir(dir)).toEqual([]);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path.join(dir, 'a-file'), '');
    await expect(run('collect', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '1', '-o', 'x', '--no-progress', '--store', path.join(dir, 'a-file'))).rejects.toThrow(
      `cannot open the artifact store ${path.join(dir, 'a-file')}: it, or a folder on its path, is a file`,
    );
  });

  it('names the file and line of an invalid input record', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-cli-bad-'));
    const file = path.join(dir, 'bad.jsonl');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(file, '{"schemaVersion":"1.0"}\n');
    await expect(run('export', '--format', 'sft', '--in', file, '-o', path.join(dir, 'o.jsonl'))).rejects.toThrow(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:1 \\$\\.id`));
  });
});

describe('cli helpers', () => {
  it('parses durations and tells files from ref names', () => {
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(() => parseDuration('soon')).toThrow(/expected a duration/);
    expect(() => parseDuration('60')).toThrow(/with its unit/); // 60 ms, when 60 s was meant
    expect(parseDuration('250ms')).toBe(250);
    expect(isFileOutput('out.jsonl')).toBe(true);
    expect(isFileOutput('./x')).toBe(true);
    expect(isFileOutput('rollouts/iter-1')).toBe(false);
  });

  it('draws a progress bar on a TTY with \\r, and plain periodic lines otherwise', () => {
    const p: CollectProgress = { done: 5, total: 10, successes: 4, failures: 1, elapsedMs: 2000, rate: 2.5, etaMs: 2000 };
    expect(progressLine(p, 10)).toBe('[#####-----] 5/10  success 0.800  2.5 ep/s  ETA 2s  failures 1');
    let tty = '';
    const ttyStream = { isTTY: true, write: (s: string) => ((tty += s), true) } as unknown as NodeJS.WriteStream;
    const r = progressReporter(ttyStream);
    r.update(p);
    r.update({ ...p, done: 10, etaMs: 0 });
    r.done();
    expect(tty.startsWith('\r[')).toBe(true);
    expect(tty.endsWith('\n')).toBe(true);
    expect(tty.split('\r')).toHaveLength(3);
    let plain = '';
    const pipe = { isTTY: false, write: (s: string) => ((plain += s), true) } as unknown as NodeJS.WriteStream;
    const q = progressReporter(pipe, { everyMs: 60_000 });
    q.update(p);
    q.update({ ...p, done: 6 });
    q.update({ ...p, done: 10 });
    q.done();
    expect(plain.split('\n').filter((l) => l !== '')).toHaveLength(2);
    expect(plain).not.toContain('\r');
  });
});
