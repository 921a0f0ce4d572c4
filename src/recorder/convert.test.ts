import { readdirSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collect, fixture, FIXTURES } from './__fixtures__/fixtures.js';
import { convertFile, convertPath } from './convert.js';
import { validateFile } from './validate.js';
import { writeJsonl } from './write.js';

describe('convertFile / convertPath', () => {
  it('converts every fixture in the folder, skipping SOURCES.md with a warning', async () => {
    const c = await collect(convertPath(fixture('.')));
    expect(c.errors).toEqual([]);
    expect(c.problems.map((p) => p.file)).toEqual([join(FIXTURES, 'SOURCES.md')]);
    // 4 SWE-agent + 4 mini + 3 events + 2 resolver runs + 4 Claude Code + 15 + 3 verifiers + 1 + 2 cassettes.
    expect(c.trajectories).toHaveLength(38);
    const formats = new Set(c.trajectories.map((t) => (t.metadata.source as { format: string }).format));
    expect(formats).toEqual(new Set(['swe-agent', 'mini-swe-agent', 'openhands-events', 'openhands-resolver', 'claude-code', 'verifiers', 'openai-chat', 'anthropic-messages']));
  });

  it('honours a forced format and reports an unknown one', async () => {
    const forced = await collect(convertFile(fixture('openhands/resolver-output.jsonl'), { format: 'openhands-resolver' }));
    expect(forced.trajectories).toHaveLength(2);
    const unknown = await collect(convertFile(fixture('openhands/resolver-output.jsonl'), { format: 'nope' }));
    expect(unknown.errors[0]?.message).toMatch(/unknown format "nope"/);
  });

  it('reports an unrecognised file and a missing path', async () => {
    expect((await collect(convertFile(fixture('SOURCES.md')))).errors[0]?.message).toMatch(/not a recognised agent log/);
    expect((await collect(convertPath(join(FIXTURES, 'does-not-exist')))).errors[0]?.message).toMatch(/cannot read path/);
  });

  it('streams a malformed Claude Code log: the bad line is reported, the session converted', async () => {
    const lines = (await readFile(fixture('claude-code/session-v2.1.17-permission-denials.jsonl'), 'utf8')).split('\n');
    lines[5] = lines[5]?.slice(0, 40) ?? '';
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-convert-'));
    const path = join(dir, 'session.jsonl');
    await writeFile(path, lines.join('\n'));
    const c = await collect(convertFile(path));
    expect(c.errors).toHaveLength(1);
    expect(c.errors[0]).toMatchObject({ line: 6, path: '$' });
    expect(c.trajectories).toHaveLength(1);
  });

  it('warns where a log stops being UTF-8 and still converts it', async () => {
    const text = await readFile(fixture('claude-code/session-v2.1.17-permission-denials.jsonl'));
    // Inside the first string value of line 3.
    const cut = text.indexOf('":"', text.indexOf('\n', text.indexOf('\n') + 1)) + 2;
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-convert-'));
    const path = join(dir, 'session.jsonl');
    await writeFile(path, Buffer.concat([text.subarray(0, cut + 1), Buffer.from([0xff]), text.subarray(cut + 1)]));
    const c = await collect(convertFile(path));
    expect(c.errors).toEqual([]);
    expect(c.problems[0]).toMatchObject({ severity: 'warning', line: 3, path: '$', message: `not UTF-8 at byte ${cut + 1}; such bytes become U+FFFD in the trajectories` });
    expect(c.trajectories).toHaveLength(1);
    const clean = await collect(convertFile(fixture('claude-code/session-v2.1.17-permission-denials.jsonl')));
    expect(clean.problems.filter((p) => p.message.includes('UTF-8'))).toEqual([]);
  });

  it('writes JSONL that validates line by line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-write-'));
    const out = join(dir, 'out.jsonl');
    const seen: string[] = [];
    const summary = await writeJsonl(convertPath(fixture('openhands')), out, { onProblem: (p) => seen.push(p.message) });
    expect(summary).toEqual({ written: 5, problems: 0, committed: true });
    expect(seen).toEqual([]);
    const report = await validateFile(out);
    expect(report).toMatchObject({ records: 5, valid: 5, problems: [] });
    const back = await collect(convertFile(out));
    expect(back.trajectories.map((t) => t.task.id)).toEqual([
      'events-basic-gui-mode',
      'events-basic-interactions-no-tools',
      'events-wrong-initial-state',
      'neubig/pr-viewer#5',
      'neubig/pr-viewer#1',
    ]);
  });

  it('follows links in a directory, enters a linked cycle once, reports a dangling link, and leaves out the output', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-walk-'));
    const logs = join(dir, 'logs');
    await mkdir(join(logs, 'sub'), { recursive: true });
    const swe = readdirSync(fixture('swe-agent')).filter((f) => f.endsWith('.traj')).sort();
    await copyFile(fixture(`swe-agent/${swe[0]}`), join(logs, 'a.traj'));
    await copyFile(fixture(`swe-agent/${swe[1]}`), join(dir, 'outside.traj'));
    await symlink(join(dir, 'outside.traj'), join(logs, 'b.traj'));
    await symlink(logs, join(logs, 'sub', 'loop'));
    await symlink(join(dir, 'gone.traj'), join(logs, 'c.traj'));
    // An earlier output inside the directory (here a copy of a trajectory file) must not be read back.
    const out = join(logs, 'out.jsonl');
    await writeJsonl(convertFile(join(logs, 'a.traj')), out);
    const c = await collect(convertPath(logs, {}, { exclude: [out] }));
    expect(c.trajectories.map((t) => (t.metadata.source as { file: string }).file)).toEqual([join(logs, 'a.traj'), join(logs, 'b.traj')]);
    expect(c.problems.map((p) => [p.file, p.severity, p.message])).toEqual([[join(logs, 'c.traj'), 'warning', expect.stringMatching(/^skipped: cannot read file \(ENOENT/)]]);
    expect((await collect(convertPath(logs))).trajectories).toHaveLength(3);
  });
});
