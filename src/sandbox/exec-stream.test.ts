import { afterAll, beforeAll, expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import type { ExecStream } from './exec-stream.js';
import { Sandbox } from './sandbox.js';

const docker = requires.docker();

/** Collects a stream's stdout and stderr until `done` says they are complete (their relative order is not kept). */
function collect(s: ExecStream, done: (out: string, err: string) => boolean): Promise<{ out: string; err: string }> {
  let out = '';
  let err = '';
  return new Promise((resolve) => {
    const check = (): void => {
      if (done(out, err)) resolve({ out, err });
    };
    s.onStderr((c) => {
      err += c.toString();
      check();
    });
    s.onStdout((c) => {
      out += c.toString();
      check();
    });
  });
}

docker.describe('ExecStream (Sandbox.openStream)', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await Sandbox.create({ task: 'exec-stream', skipGc: true });
  });
  afterAll(async () => {
    await sb?.destroy();
  });

  it('keeps one process answering line by line on stdin, stdout and stderr apart, as the agent user in /work', async () => {
    const s = await sb.openStream(['sh', '-c', 'id -u; pwd; while read line; do echo "got $line"; echo "err $line" >&2; done'], { env: ['X=1'] });
    const first = collect(s, (o, e) => o.includes('got one\n') && e.includes('err one\n'));
    s.write('one\n');
    expect(await first).toEqual({ out: '1000\n/work\ngot one\n', err: 'err one\n' });
    // The same process answers again: no new exec.
    const second = collect(s, (o, e) => o === 'got two\n' && e === 'err two\n');
    s.write('two\n');
    expect((await second).out).toBe('got two\n');
    const ended = new Promise<void>((resolve) => s.onEnd(resolve));
    s.destroy();
    await ended;
    expect(s.isEnded).toBe(true);
    expect(s.write('three\n')).toBe(false);
  });

  it('reports the end when the process exits, with its exit status', async () => {
    const s = await sb.openStream(['sh', '-c', 'read line; exit 7']);
    const ended = new Promise<void>((resolve) => s.onEnd(resolve));
    s.write('bye\n');
    await ended;
    expect(await s.exitCode()).toBe(7);
  });

  it('refuses to start in a destroyed sandbox', async () => {
    const other = await Sandbox.create({ task: 'exec-stream', skipGc: true });
    await other.destroy();
    await expect(other.openStream(['true'])).rejects.toThrow(/used after destroy/);
  });
});
