import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonAlive, groupMembers, readDaemon, startDaemon, stopDaemon } from './daemon.js';

describe('daemons', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gymflow-daemon-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('start detached with a pid file and a log; stop takes the whole process group', async () => {
    const pidFile = join(dir, 'run', 'a.json');
    // A child that ignores SIGTERM and keeps a grandchild: only the group kill after the grace ends both.
    const record = await startDaemon({ name: 'a', command: 'sh', args: ['-c', "trap '' TERM; echo hello; sleep 300 & wait"], pidFile, logFile: join(dir, 'logs', 'a.log') });
    expect(readDaemon(pidFile)).toEqual(record);
    expect(daemonAlive(record)).toBe(true);
    for (let i = 0; i < 50 && groupMembers(record.pid).length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(groupMembers(record.pid).length).toBe(2);
    expect(await stopDaemon(record, pidFile, { graceMs: 500 })).toBe('killed');
    expect(daemonAlive(record)).toBe(false);
    expect(groupMembers(record.pid)).toEqual([]);
    expect(readDaemon(pidFile)).toBeUndefined();
    expect(await readFile(join(dir, 'logs', 'a.log'), 'utf8')).toMatch(/^=== .* sh -c .*\nhello\n/);
  });

  it('a recycled pid is not the daemon: the start time must match too', async () => {
    const pidFile = join(dir, 'run', 'b.json');
    const record = await startDaemon({ name: 'b', command: 'sleep', args: ['300'], pidFile, logFile: join(dir, 'logs', 'b.log') });
    const stale = { ...record, startTicks: record.startTicks - 1 };
    expect(daemonAlive(stale)).toBe(false);
    // Stopping the stale record leaves the process that now has its pid, and that process's group, alone.
    expect(await stopDaemon(stale, pidFile, { graceMs: 100 })).toBe('not running');
    expect(daemonAlive(record)).toBe(true);
    expect(await stopDaemon(record, pidFile, { graceMs: 5_000 })).toBe('stopped');
    expect(daemonAlive(record)).toBe(false);
  });
});
