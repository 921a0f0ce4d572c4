import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { expect, it, vi } from 'vitest';
import { requires } from '../../../tests/support/requires.js';
import { runEpisode } from '../../core/rollout.js';
import { SANDBOX_ENV_ID, SandboxEnv } from '../../envs/sandbox/env.js';
import { SandboxExpert } from '../../envs/sandbox/expert.js';
import { unpackTar } from '../../sandbox/tar.js';
import { replayTrajectory, sandboxCommand } from './sandbox.js';

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

docker.describe('gymflow sandbox', () => {
  it('create --task, exec, snapshot, reset, destroy', async () => {
    const { id } = (await cli('create', '--task', 'celsius-sign')) as { id: string };
    try {
      const edit = await cli('exec', id, 'shell', '--params', JSON.stringify({ command: 'sed -i "s/- 32/+ 32/" units.py && echo new > notes.txt' }));
      expect(edit).toMatchObject({ exitCode: 0, truncated: false });
      expect(Object.keys(edit).sort()).toEqual(['durationMs', 'exitCode', 'observation', 'truncated']);
      const file = join(mkdtempSync(join(tmpdir(), 'gymflow-snap-')), 'snap.tar');
      expect(await cli('snapshot', id, '-o', file)).toMatchObject({ added: ['notes.txt'], modified: ['units.py'], deleted: [] });
      const entries = await unpackTar(readFileSync(file));
      expect(entries.map((e) => e.path)).toEqual(['snapshot.json', 'files/notes.txt', 'files/units.py']);
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
});
