import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { requires } from '../../../tests/support/requires.js';
import { runEpisode } from '../../core/rollout.js';
import { SANDBOX_ENV_ID, SandboxEnv } from '../../envs/sandbox/env.js';
import { USER_TASK } from '../../envs/sandbox/__fixtures__/user-task.js';
import { SandboxExpert } from '../../envs/sandbox/expert.js';
import { dockerClient, LABEL_OWNER_PID, Sandbox } from '../../sandbox/index.js';
import { unpackTar } from '../../sandbox/tar.js';
import { maskTimings, readTrajectoryFile, replayTrajectory, sandboxCommand } from './sandbox.js';

const docker = requires.docker();

/** Runs `gymflow sandbox …` in-process; returns the JSON it printed. */
async function cli(...args: string[]): Promise<Record<string, unknown>> {
  const program = new Command('gymflow').exitOverride();
  sandboxCommand(program);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(['node', 'gymflow', 'sandbox', ...args]);
  } finally {
    spy.mockRestore();
  }
  return JSON.parse(out) as Record<string, unknown>;
}

describe('gymflow sandbox snapshot', () => {
  it('refuses an existing snapshot file before it looks for the sandbox', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gymflow-snap-')), 'snap.tar');
    writeFileSync(file, 'an earlier snapshot');
    await expect(cli('snapshot', 'no-such-sandbox', '-o', file)).rejects.toThrow(`output ${file} already exists (pass --force`);
    expect(readFileSync(file, 'utf8')).toBe('an earlier snapshot');
  });
});

docker.describe('gymflow sandbox', () => {
  it('create --task, exec, snapshot, reset, destroy', async () => {
    const { id } = (await cli('create', '--task', 'celsius-sign')) as { id: string };
    try {
      const listed = (await cli('ls', '--json')) as unknown as { id: string }[];
      expect(listed.find((b) => b.id === id)).toMatchObject({ task: 'celsius-sign', state: 'running', detached: true, owner: null });
      const edit = await cli('exec', id, 'shell', '--params', JSON.stringify({ command: 'sed -i "s/- 32/+ 32/" units.py && echo new > notes.txt' }));
      expect(edit).toMatchObject({ exitCode: 0, truncated: false });
      expect(Object.keys(edit).sort()).toEqual(['durationMs', 'exitCode', 'observation', 'truncated']);
      const file = join(mkdtempSync(join(tmpdir(), 'gymflow-snap-')), 'snap.tar');
      expect(await cli('snapshot', id, '-o', file)).toMatchObject({ added: ['notes.txt'], modified: ['units.py'], deleted: [] });
      const entries = await unpackTar(readFileSync(file));
      expect(entries.map((e) => e.path)).toEqual(['snapshot.json', 'files/notes.txt', 'files/units.py']);
      // A sandbox's state may be gone by the next try: an earlier snapshot is replaced only with --force.
      const first = readFileSync(file);
      await expect(cli('snapshot', id, '-o', file)).rejects.toThrow(`output ${file} already exists (pass --force to replace it, or choose another path)`);
      expect(readFileSync(file).equals(first)).toBe(true);
      expect(await cli('snapshot', id, '-o', file, '--force')).toMatchObject({ added: ['notes.txt'], modified: ['units.py'], deleted: [] });
      expect(readFileSync(file).equals(first)).toBe(false); // a new takenAt
      expect(await cli('exec', id, 'submit')).toMatchObject({ observation: 'resolved', exitCode: 0 });
      await cli('reset', id);
      expect(await cli('exec', id, 'file_read', '--params', '{"path":"notes.txt"}')).toMatchObject({ observation: 'Error: no such file: notes.txt' });
    } finally {
      expect(await cli('destroy', id)).toMatchObject({ destroyed: true });
    }
  }, 60_000);

  it('replay reproduces an expert trajectory and reports the first divergent step of an altered one', async () => {
    const env = new SandboxEnv();
    let trajectory;
    try {
      trajectory = await runEpisode(env, new SandboxExpert(), { envId: SANDBOX_ENV_ID, seed: 0, task: 'fizzbuzz-order' });
    } finally {
      await env.close();
    }
    expect(trajectory.outcome.success).toBe(true);
    expect(await replayTrajectory(trajectory)).toMatchObject({ firstDivergentStep: null, outcome: { recorded: true, replayed: true } });
    const altered = structuredClone(trajectory);
    altered.steps[2]!.observation = 'something else';
    expect(await replayTrajectory(altered)).toMatchObject({ firstDivergentStep: 2, replayed: 3 });
  }, 60_000);

  it('create --tasks records the absolute path (submit and reset work from another directory); submit leaves no hidden tests behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-cli-tasks-'));
    writeFileSync(join(dir, 'my.jsonl'), `${JSON.stringify(USER_TASK)}\n`);
    const cwd = process.cwd();
    let id: string;
    try {
      process.chdir(dir);
      ({ id } = (await cli('create', '--task', 'mine-1', '--tasks', 'my.jsonl')) as { id: string });
    } finally {
      process.chdir(cwd);
    }
    try {
      expect((await dockerClient().getContainer(id).inspect()).Config.Labels?.['gymflow.sandbox.tasks-file']).toBe(join(dir, 'my.jsonl'));
      expect(await cli('exec', id, 'submit')).toMatchObject({ observation: 'not resolved', tests: { failToPass: { failed: ['test_m.py::test_f'] } } });
      const file = join(dir, 'snap.tar');
      expect(await cli('snapshot', id, '-o', file)).toMatchObject({ added: [], modified: [], deleted: [] });
      expect(await cli('reset', id)).toMatchObject({ task: 'mine-1' });
    } finally {
      await cli('destroy', id);
    }
  }, 60_000);

  it('create names a missing tasks file as such, also without --task, and creates nothing', async () => {
    const mine = async (): Promise<number> => (await dockerClient().listContainers({ all: true, filters: { label: [`${LABEL_OWNER_PID}=${process.pid}`] } })).length;
    const before = await mine();
    await expect(cli('create', '--tasks', 'no-such-tasks.jsonl')).rejects.toThrow(/no-such-tasks\.jsonl: cannot read the tasks file: no such file/);
    await expect(cli('create', '--task', 'x', '--tasks', 'no-such-tasks.jsonl')).rejects.toThrow(/no-such-tasks\.jsonl: cannot read the tasks file/);
    expect(await mine()).toBe(before);
  });

  it("snapshot records the container's real hardening settings and creates the output's directory", async () => {
    const box = await Sandbox.create({ detached: true, skipGc: true, config: { memoryMiB: 300, cpus: 0.5, pidsLimit: 99, workDirMiB: 32 } });
    try {
      const file = join(mkdtempSync(join(tmpdir(), 'gymflow-snap-')), 'new', 'dir', 'snap.tar');
      await cli('snapshot', box.id, '-o', file);
      const facts = JSON.parse((await unpackTar(readFileSync(file)))[0]!.content.toString()) as { hardening: unknown };
      expect(facts.hardening).toEqual(box.config);
      expect(facts.hardening).toMatchObject({ memoryMiB: 300, cpus: 0.5, pidsLimit: 99, workDirMiB: 32 });
    } finally {
      await box.destroy();
    }
  }, 60_000);

  it('destroy removes a stopped sandbox and refuses a container that is not one', async () => {
    const d = dockerClient();
    const { id } = (await cli('create')) as { id: string };
    const other = await d.createContainer({ Image: 'gymflow/sandbox:latest', Cmd: ['true'] });
    try {
      await d.getContainer(id).stop({ t: 0 });
      expect(await cli('destroy', id)).toMatchObject({ id, destroyed: true });
      await expect(d.getContainer(id).inspect()).rejects.toThrow(/no such container/i);
      await expect(cli('destroy', other.id)).rejects.toThrow(/is not a gymflow sandbox/);
    } finally {
      await other.remove({ force: true });
      await d.getContainer(id).remove({ force: true }).catch(() => undefined);
    }
  }, 60_000);

  it('SIGINT / SIGTERM / SIGHUP during replay remove its containers (the active one and the spare) and exit 130 / 143 / 129', async () => {
    const env = new SandboxEnv();
    let trajectory;
    try {
      trajectory = await runEpisode(env, new SandboxExpert(), { envId: SANDBOX_ENV_ID, seed: 0, task: 'celsius-sign' });
    } finally {
      await env.close();
    }
    trajectory.steps[1]!.action = { tool: 'shell', params: { command: 'sleep 120', timeout_s: 120 } };
    const file = join(mkdtempSync(join(tmpdir(), 'gymflow-sig-')), 'slow.json');
    writeFileSync(file, JSON.stringify(trajectory));
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
      const child = spawn(process.execPath, [resolve('bin/gymflow.js'), 'sandbox', 'replay', file], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
      const mine = async (): Promise<string[]> =>
        (await dockerClient().listContainers({ all: true, filters: { label: [`${LABEL_OWNER_PID}=${child.pid}`] } })).map((c) => c.Id);
      // The episode's container and the warm pool's spare, then the step's `sleep` under way (seen in the
      // containers' process lists, not assumed after a fixed wait).
      const sleeping = async (): Promise<boolean> => {
        for (const id of await mine()) {
          const top = (await dockerClient().getContainer(id).top().catch(() => undefined)) as { Processes?: string[][] } | undefined;
          if (top?.Processes?.some((p) => p.join(' ').includes('sleep 120')) === true) return true;
        }
        return false;
      };
      for (let i = 0; i < 600 && (await mine()).length < 2; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await mine(), stderr).toHaveLength(2);
      for (let i = 0; i < 600 && !(await sleeping()); i++) await new Promise((r) => setTimeout(r, 100));
      expect(await sleeping(), stderr).toBe(true);
      child.kill(signal);
      expect(await exited, stderr).toBe(code);
      // After SIGHUP nothing is written (the terminal is gone); the containers go all the same.
      if (signal !== 'SIGHUP') expect(stderr).toMatch(new RegExp(`${signal}: removing 2 sandbox containers`));
      expect(await mine()).toEqual([]);
    }
  }, 300_000);
});

describe('gymflow sandbox replay: run times', () => {
  it('masks run times only, so a pytest step replays while any other difference still diverges', () => {
    expect(maskTimings('1 passed in 0.01s')).toBe(maskTimings('1 passed in 0.00s'));
    expect(maskTimings('==== 3 passed in 1.20s (0:00:01) ====\nreal\t0m0.003s')).toBe('==== 3 passed in <time> (<time>) ====\nreal\t<time>');
    expect(maskTimings('took 250ms')).toBe('took <time>');
    expect(maskTimings('1 passed in 0.01s')).not.toBe(maskTimings('1 failed in 0.01s'));
    expect(maskTimings('x = 3s + 4')).toBe('x = <time> + 4'); // a unit glued to a number is taken as a time
    expect(maskTimings('sums 3 s and tests')).toBe('sums 3 s and tests');
  });
});

describe('gymflow sandbox replay: unreadable input', () => {
  it('names the file when it is missing, a directory, empty or not JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-replay-'));
    mkdirSync(join(dir, 'adir'));
    writeFileSync(join(dir, 'empty.json'), '\n');
    writeFileSync(join(dir, 'bad.json'), '{not json');
    writeFileSync(join(dir, 'bad.jsonl'), '{"a":\n{"b":1}\n');
    expect(() => readTrajectoryFile(join(dir, 'none.json'))).toThrow(/replay: cannot read .*none\.json: no such file/);
    expect(() => readTrajectoryFile(join(dir, 'adir'))).toThrow(/replay: cannot read .*adir: is a directory, not a trajectory file/);
    expect(() => readTrajectoryFile(join(dir, 'empty.json'))).toThrow(/replay: .*empty\.json is empty/);
    expect(() => readTrajectoryFile(join(dir, 'bad.json'))).toThrow(/replay: .*bad\.json: not JSON: /);
    expect(() => readTrajectoryFile(join(dir, 'bad.jsonl'))).toThrow(/replay: .*bad\.jsonl:1: not JSON: /);
  });
});
