import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { environmentRows } from '../src/cli/commands/envs.js';
import { parseTrajectory } from '../src/core/trajectory.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { registerBuiltinEnvs } from '../src/envs/register.js';
import { gymflowAsync, gymflowSync } from './support/cli.js';

const gymflow = gymflowSync;

// Each test spawns the CLI several times (~2.5 s apiece to start and run on the idle 2-core CI
// machine, more beside the pipeline tests this file starts with), so the default 30 s cut tests that took 27 s
// and one that took 32 s (2026-11-28). On a busy machine the longest took 60 s (of 90 s then), hence 240 s.
describe('gymflow CLI', { timeout: 240_000 }, () => {
  it("runs the README's code example inside the clone (the package imports itself by name, from its build)", () => {
    const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
    const example = /\nIn code:\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("from 'gymflow'");
    // Inside the clone (its package.json is what makes `gymflow/…` resolve), in the ignored .gymflow/.
    mkdirSync(join(PACKAGE_ROOT, '.gymflow'), { recursive: true });
    const dir = mkdtempSync(join(PACKAGE_ROOT, '.gymflow', 'readme-example-'));
    try {
      const file = join(dir, 'example.mts');
      writeFileSync(file, example as string);
      const tsx = join(PACKAGE_ROOT, 'node_modules', '.bin', 'tsx');
      const r = spawnSync(tsx, [file], { encoding: 'utf8', timeout: 60_000, cwd: PACKAGE_ROOT });
      expect([r.status, r.stderr]).toEqual([0, '']);
      expect(r.stdout.trim()).toMatch(/^-?\d+(\.\d+)? true submitted$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists environments as JSON for scripts', () => {
    const r = gymflow('envs', '--json');
    expect(r.status).toBe(0);
    const envs = JSON.parse(r.stdout) as { id: string; agents: string[]; heldoutTasks: number }[];
    const math = envs.find((e) => e.id === 'gymflow/text-math-v0');
    expect(math?.agents).toEqual(['random', 'expert']);
    expect(math?.heldoutTasks).toBeGreaterThan(0);
  });

  it("lists the build's rows of the built-in environments: what the environments themselves say", async () => {
    // `gymflow envs` prints the listing the build wrote (scripts/env-listing.mjs) without importing an environment.
    expect(existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'commands', 'envs-listing.json'))).toBe(true);
    registerBuiltinEnvs();
    const live = await environmentRows();
    const r = await gymflowAsync(['envs', '--json'], { env: { GYMFLOW_OPENENV: '' } });
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout)).toEqual(live);
    // A server named in GYMFLOW_OPENENV is registered and described at run time: listed beside the others (here
    // unavailable: nothing listens on the port).
    const withServer = await gymflowAsync(['envs', '--json'], { env: { GYMFLOW_OPENENV: 'down=http://127.0.0.1:9' } });
    expect([withServer.status, withServer.stderr]).toEqual([0, '']);
    const rows = JSON.parse(withServer.stdout) as { id: string; unavailable?: string }[];
    expect(rows.filter((row) => row.id !== 'openenv/down-v0')).toEqual(live);
    expect(rows.find((row) => row.id === 'openenv/down-v0')?.unavailable).toMatch(/127\.0\.0\.1:9/);
    // The table: the same rows, one a line under its header.
    const table = gymflow('envs').stdout.trim().split('\n').slice(2);
    expect(table.map((line) => line.split(/\s+/).slice(0, 4))).toEqual(live.map((row) => [row.id, row.domain, String(row.maxSteps), `${row.trainTasks}/${row.heldoutTasks}`]));
  });

  it('runs an episode and writes a valid trajectory', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'gymflow-cli-')), 'ep.jsonl');
    const r = gymflow('run-episode', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '--seed', '3', '--out', out);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/success=true/);
    const t = parseTrajectory(JSON.parse(readFileSync(out, 'utf8')), out);
    expect(t.envId).toBe('gymflow/tool-use-v0');
    expect(t.outcome.success).toBe(true);
    expect(t.steps.at(-1)?.action.tool).toBe('submit');
    // The same seed gives the same episode, hence the same content id.
    const again = gymflow('run-episode', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '--seed', '3', '--json');
    expect((JSON.parse(again.stdout) as { id: string }).id).toBe(t.id);
    // An episode may have cost money: the file is replaced only with --force.
    const written = readFileSync(out, 'utf8');
    const refused = gymflow('run-episode', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '--seed', '4', '--out', out);
    expect([refused.status, refused.stdout, refused.stderr.trim()]).toEqual([1, '', `gymflow: output ${out} already exists (pass --force to replace it, or choose another path)`]);
    expect(readFileSync(out, 'utf8')).toBe(written);
    expect(gymflow('run-episode', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '--seed', '4', '--out', out, '--force').status).toBe(0);
    expect(readFileSync(out, 'utf8')).not.toBe(written);
  });

  it('prints the trajectory JSON Schema', () => {
    const r = gymflow('record', 'schema');
    expect(r.status).toBe(0);
    const schema = JSON.parse(r.stdout) as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['schemaVersion', 'id', 'task', 'steps', 'outcome']));
  });

  it('fails with one readable line on stderr for bad input, and a stack with --verbose', () => {
    const unknown = gymflow('run-episode', '--env', 'gymflow/nope-v0');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^gymflow: environment 'gymflow\/nope-v0' is not registered; registered: .*gymflow\/text-math-v0/)]);

    const agent = gymflow('run-episode', '--env', 'gymflow/text-math-v0', '--agent', 'genius');
    expect(agent.status).toBe(1);
    expect(agent.stderr).toMatch(/unknown agent 'genius' for gymflow\/text-math-v0; available: random, openai:MODEL\[@BASE_URL\], anthropic:MODEL, local:DIR, expert/);

    const seed = gymflow('run-episode', '--env', 'gymflow/text-math-v0', '--seed', 'abc');
    expect(seed.status).not.toBe(0);
    expect(seed.stderr).toMatch(/--seed.*expected an integer, got 'abc'/);

    const task = gymflow('run-episode', '--env', 'gymflow/text-math-v0', '--task', 'no-such-task', '--verbose');
    expect(task.status).toBe(1);
    expect(task.stderr).toMatch(/TaskError/);
    expect(task.stderr).toMatch(/\n\s+at /);
  });

  it('converts real agent logs, validates the result, and reports a bad line with file, line and path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-cli-'));
    const out = join(dir, 'swe.jsonl');
    const fixtures = process.env.GYMFLOW_FIXTURES ?? join(PACKAGE_ROOT, '..', 'shared', 'fixtures', 'agent-logs');
    const detect = gymflow('record', 'detect', join(fixtures, 'claude-code', 'session-v2.1.17-permission-denials.jsonl'), '--json');
    expect(JSON.parse(detect.stdout)).toMatchObject({ format: 'claude-code' });
    const conv = gymflow('record', 'convert', join(fixtures, 'swe-agent'), '-o', out);
    expect(conv.status).toBe(0);
    expect(conv.stderr).toMatch(/converted 4 trajectories/);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(gymflow('record', 'validate', out).status).toBe(0);
    const broken = join(dir, 'broken.jsonl');
    const second = JSON.parse(lines[1] as string) as { steps: { action: { tool: unknown } }[] };
    second.steps[2]!.action.tool = null;
    writeFileSync(broken, [lines[0], JSON.stringify(second), lines[2]].join('\n'));
    const bad = gymflow('record', 'validate', broken);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(`${broken}:2 $.steps[2].action.tool`);
    expect(bad.stdout).toContain('2/3 valid trajectories');
    const diff = gymflow('record', 'diff', out, broken, '--index-a', '2', '--index-b', '1', '--json');
    expect(JSON.parse(diff.stdout)).toMatchObject({ identical: true });
  });

  it('detects and converts an OpenHands V1 output.jsonl line by line, naming the one bad line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-cli-'));
    const v1 = join(PACKAGE_ROOT, 'src', 'recorder', '__fixtures__', 'openhands-v1', 'output.jsonl');
    expect(JSON.parse(gymflow('record', 'detect', v1, '--json').stdout)).toMatchObject({ format: 'openhands-v1' });
    const lines = readFileSync(v1, 'utf8').split('\n');
    lines[1] = (lines[1] as string).slice(0, 300);
    const damaged = join(dir, 'output.jsonl');
    writeFileSync(damaged, lines.join('\n'));
    const out = join(dir, 'v1.jsonl');
    const conv = gymflow('record', 'convert', damaged, '-o', out);
    expect(conv.stderr).toContain(`${damaged}:2 $: invalid JSON`);
    expect(conv.stderr).toMatch(/converted 2 trajectories .* 1 error\(s\)/);
    expect(gymflow('record', 'validate', out).stdout).toContain('2/2 valid trajectories');
  });

  it('validates an agent log against its format, and processes logs (convert, validate, score) in one pass', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-cli-'));
    const fixtures = process.env.GYMFLOW_FIXTURES ?? join(PACKAGE_ROOT, '..', 'shared', 'fixtures', 'agent-logs');
    const log = join(fixtures, 'claude-code', 'session-v2.1.17-permission-denials.jsonl');
    const valid = gymflow('record', 'validate', log);
    expect([valid.status, valid.stdout.trim()]).toEqual([0, `${log}: 1/1 claude-code trajectories converted, 0 problem(s)`]);
    const broken = join(dir, 'session.jsonl');
    const lines = readFileSync(log, 'utf8').split('\n');
    lines[5] = '{oops';
    writeFileSync(broken, lines.join('\n'));
    const bad = gymflow('record', 'validate', broken, '--format', 'claude-code', '--json');
    expect(bad.status).toBe(1);
    expect((JSON.parse(bad.stdout) as { problems: unknown[] }).problems).toContainEqual(expect.objectContaining({ file: broken, line: 6, path: '$', severity: 'error' }));
    expect(gymflow('record', 'validate', log, '--format', 'nope').stderr).toMatch(/--format nope: unknown format; known: gymflow/);

    const out = join(dir, 'scored.jsonl');
    const processed = gymflow('record', 'process', join(fixtures, 'swe-agent'), '--domain', 'coding', '-o', out, '--json');
    expect(processed.status).toBe(0);
    expect(JSON.parse(processed.stdout)).toMatchObject({ scored: 4, written: true, errors: 0 });
    const scored = readFileSync(out, 'utf8').trim().split('\n').map((l) => parseTrajectory(JSON.parse(l), out));
    expect(scored.every((t) => typeof t.reward?.total === 'number')).toBe(true);
    expect(gymflow('record', 'process', join(fixtures, 'swe-agent'), '--domain', 'coding', '-o', out).stderr).toMatch(/already exists|--force/);
  });

  it('never lets a conversion overwrite its input or lose an earlier output, and says what went wrong', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-cli-'));
    const fixtures = process.env.GYMFLOW_FIXTURES ?? join(PACKAGE_ROOT, '..', 'shared', 'fixtures', 'agent-logs');
    const logs = join(dir, 'logs');
    cpSync(join(fixtures, 'swe-agent'), logs, { recursive: true });
    const log = join(logs, readdirSync(logs).find((f) => f.endsWith('.traj')) as string);
    const raw = readFileSync(log, 'utf8');
    const self = gymflow('record', 'convert', log, '-o', log);
    expect([self.status, self.stderr.trim()]).toEqual([1, `gymflow: -o ${log}: is the input ${log}; writing it would replace what is being read (choose another output file)`]);
    expect(readFileSync(log, 'utf8')).toBe(raw);
    // An output inside the directory converted is never read back in, on the first run or the next (forced).
    const inside = join(logs, 'out.jsonl');
    for (const force of [[], ['--force']]) {
      const r = gymflow('record', 'convert', logs, '-o', inside, ...force);
      expect([r.status, r.stderr]).toEqual([0, expect.stringMatching(/converted 4 trajectories/)]);
      expect(readFileSync(inside, 'utf8').trim().split('\n')).toHaveLength(4);
    }
    // An earlier output is replaced only with --force, and checked before any log is read.
    const earlier = readFileSync(inside, 'utf8');
    const again = gymflow('record', 'convert', log, '-o', inside);
    expect([again.status, again.stderr.trim()]).toEqual([1, `gymflow: output ${inside} already exists (pass --force to replace it, or choose another path)`]);
    expect(readFileSync(inside, 'utf8')).toBe(earlier);
    const missing = gymflow('record', 'convert', join(dir, 'nope'), '-o', inside, '--force');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/cannot read path \(ENOENT[\s\S]*converted 0 trajectories .*; nothing written to .*out\.jsonl/);
    expect(readFileSync(inside, 'utf8').trim().split('\n')).toHaveLength(4);
    const nested = gymflow('record', 'convert', log, '-o', join(dir, 'new', 'dir', 'x.jsonl'));
    expect(nested.status).toBe(0);
    expect(readdirSync(join(dir, 'new', 'dir'))).toEqual(['x.jsonl']);
    const isDir = gymflow('record', 'convert', log, '-o', logs);
    expect([isDir.status, isDir.stderr.trim()]).toEqual([1, `gymflow: cannot write ${logs}: is a directory`]);
    // `diff` passes on why a file has no trajectory; `detect` names the path it could not read.
    const truncated = join(dir, 'cut.traj');
    writeFileSync(truncated, raw.slice(0, 200));
    const diff = gymflow('record', 'diff', truncated, log);
    expect(diff.status).toBe(1);
    expect(diff.stderr).toContain(`${truncated}: has 0 trajectories, no trajectory at index 0; 1 problem(s):\n  ${truncated}`);
    expect(gymflow('record', 'detect', logs).stderr.trim()).toBe(`gymflow: ${logs}: cannot read (EISDIR: illegal operation on a directory, read)`);
    // A reader that goes away ends the command quietly.
    const piped = spawnSync('bash', ['-c', `set -o pipefail; node ${join(PACKAGE_ROOT, 'bin', 'gymflow.js')} record convert ${JSON.stringify(fixtures)} -o - 2>${join(dir, 'err')} | head -c 100 >/dev/null`]);
    expect(piped.status).toBe(0);
    expect(readFileSync(join(dir, 'err'), 'utf8')).not.toMatch(/Unhandled|EPIPE|\n\s+at /);
  });

  it('checks a profile file and reports every problem with its JSON path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-cli-'));
    const file = join(dir, 'bad.json');
    spawnSync('bash', ['-c', `echo '{"name":"x","description":"d","tools":[],"terminalTools":["go"],"outcome":{"rule":"exact-match","description":"d"},"rubricWeights":{"outcome":1},"stepBudget":3}' > ${file}`]);
    const r = gymflow('profiles', 'check', file);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${file} $.tools: Too small`);
  });
});
