import { describe, expect, it } from 'vitest';
import { EXEC_LOST, execFailure, type ExecResult, type Sandbox } from '../../sandbox/index.js';
import type { SandboxTask } from './tasks.js';
import { BASE_STATE_ATTEMPTS, initialArchive } from './workspace.js';

/** An exec's result: `hung` is an exec that did not come back (the engine refused or lost it). */
function result(exitCode: number, hung = false, stdout?: Buffer): ExecResult {
  return { output: hung ? '[sandbox: exec failed: lost]' : `exit ${exitCode}`, exitCode, truncated: false, outputBytes: 0, timedOut: false, hung, durationMs: 1, ...(stdout ? { stdout } : {}) };
}

/**
 * A sandbox whose execs answer from a script, in order (the retry's logic only: the soak's sandbox configuration
 * runs the real thing, with refused execs in real containers). Records what was asked of it.
 */
function scriptedSandbox(execs: ExecResult[]): { sb: Sandbox; calls: string[] } {
  const calls: string[] = [];
  const next = (what: string): ExecResult => {
    calls.push(what);
    const r = execs.shift();
    if (r === undefined) throw new Error(`unexpected ${what}`);
    return r;
  };
  const sb = {
    reset: async () => void calls.push('reset'),
    exec: async () => next('git init'),
    getTar: async () => {
      const r = next('getTar');
      if (r.exitCode !== 0) throw execFailure('getTar of .', r);
      return r.stdout as Buffer;
    },
  };
  return { sb: sb as unknown as Sandbox, calls };
}

let n = 0;
/** A task of its own per test: the base state is built once per task and process. */
function task(): SandboxTask {
  n += 1;
  return { id: `retry-${n}`, instruction: '', split: 'train', files: { [`f${n}.py`]: 'x = 1\n' }, patch: '', testPatch: '', testFiles: {}, failToPass: [], passToPass: [], testCmd: 'pytest -q' };
}

describe("a task's base state", () => {
  it('is built again from the task files when the engine lost an exec of the build', async () => {
    const tar = Buffer.from('tar');
    const { sb, calls } = scriptedSandbox([result(-1, true), result(0), result(-1, true), result(0), result(0, false, tar)]);
    await expect(initialArchive(sb, task())).resolves.toBe(tar);
    // a lost git init, then a lost getTar, then a whole build; then the reset to the built state
    expect(calls).toEqual(['reset', 'git init', 'reset', 'git init', 'getTar', 'reset', 'git init', 'getTar', 'reset']);
  });

  it(`gives up after ${BASE_STATE_ATTEMPTS} lost builds, and at once when the command itself fails`, async () => {
    const lost = scriptedSandbox(Array.from({ length: BASE_STATE_ATTEMPTS }, () => result(-1, true)));
    await expect(initialArchive(lost.sb, task())).rejects.toMatchObject({ code: EXEC_LOST, message: expect.stringMatching(/git init of the base state failed \(exit -1\)/) });
    expect(lost.calls.filter((c) => c === 'git init')).toHaveLength(BASE_STATE_ATTEMPTS);
    const broken = scriptedSandbox([result(128)]);
    await expect(initialArchive(broken.sb, task())).rejects.toMatchObject({ code: 'SANDBOX_ERROR', message: expect.stringMatching(/git init of the base state failed \(exit 128\): exit 128/) });
    expect(broken.calls).toEqual(['reset', 'git init']);
  });
});
