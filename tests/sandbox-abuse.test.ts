/**
 * The abuse suite: what an adversarial (or just careless) agent might do inside `gymflow/sandbox-v0`, run
 * against the real engine. Each attempt must be contained, the agent must get a clear observation, the host
 * must be unaffected, and the sandbox must either still work or be replaced before the next step.
 */
import { hostname } from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TimeStep } from '../src/core/types.js';
import { SandboxEnv } from '../src/envs/sandbox/env.js';
import { requires } from './support/requires.js';

const docker = requires.docker();

docker.describe('sandbox abuse suite', () => {
  // One environment (one container) for the whole suite; every attempt is followed by a health check.
  let env: SandboxEnv;
  const shell = (command: string, timeout_s?: number): Promise<TimeStep> =>
    env.step({ tool: 'shell', params: timeout_s === undefined ? { command } : { command, timeout_s } });

  /** The sandbox answers and /work is usable. */
  async function stillWorks(): Promise<void> {
    const ts = await shell('echo alive > probe.txt && cat probe.txt && rm probe.txt');
    expect(ts.observation).toContain('alive');
    expect(ts.info.exitCode).toBe(0);
  }

  beforeAll(async () => {
    env = new SandboxEnv({ sandbox: { memoryMiB: 256, pidsLimit: 128, workDirMiB: 64 }, shellTimeoutS: 10 });
    await env.reset({ task: 'sum-to-off-by-one', seed: 0 });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('network egress fails (no network at all)', async () => {
    const ts = await shell(
      `python3 -c "import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)" 2>&1 | tail -1; cat /sys/class/net/*/operstate 2>/dev/null | wc -l`,
    );
    expect(ts.observation).toMatch(/Network is unreachable|No route/);
    await stillWorks();
  });

  it('a fork bomb is killed with everything else the command left running', async () => {
    const ts = await shell(':(){ :|:& };:', 3);
    expect(ts.observation).toMatch(/killed|exit code/);
    await stillWorks();
  }, 60_000);

  it('a foreground fork bomb hits the pids limit, is killed at the time limit, and leaves nothing behind', async () => {
    const ts = await shell(`python3 -c "import os\nwhile True:\n  try: os.fork()\n  except OSError: pass"`, 3);
    expect(ts.observation).toMatch(/killed: time limit of 3s exceeded/);
    const ps = await shell('ls -d /proc/[0-9]* | wc -l');
    expect(Number(ps.observation.split('\n')[0])).toBeLessThan(10);
    await stillWorks();
  }, 60_000);

  it('a memory hog is OOM-killed with a clear observation', async () => {
    const ts = await shell(`python3 -c "x = bytearray(1024 * 1024 * 1024); print('allocated')"`);
    expect(ts.observation).not.toContain('allocated');
    expect(ts.observation).toMatch(/MemoryError|out of memory|killed/);
    await stillWorks();
  });

  it('filling the work dir stops at its size and can be cleaned up', async () => {
    const ts = await shell('dd if=/dev/zero of=big bs=1M count=200 2>&1');
    expect(ts.observation).toMatch(/No space left on device/);
    const rm = await shell('rm -f big && df -m /work | tail -1');
    expect(rm.info.exitCode).toBe(0);
    await stillWorks();
  });

  it('a CPU spin is killed at the time limit', async () => {
    const started = Date.now();
    const ts = await shell('while :; do :; done', 2);
    expect(ts.observation).toContain('time limit of 2s exceeded');
    expect(ts.info.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(15_000);
    await stillWorks();
  });

  it('100 MB of output is truncated with a visible marker and the byte count', async () => {
    const ts = await shell('head -c 100000000 /dev/zero | tr "\\0" x');
    expect(ts.info.truncated).toBe(true);
    expect(ts.observation).toMatch(/output truncated: \d+ bytes omitted of 100000000 bytes total/);
    expect(ts.observation.length).toBeLessThan(20_000);
    await stillWorks();
  });

  it('file tools refuse paths outside /work: .., absolute paths, symlinks, /proc', async () => {
    await shell('ln -s /etc/passwd passwd-link; ln -s /proc/self/root rootlink');
    for (const path of ['../etc/passwd', '/etc/passwd', 'passwd-link', 'rootlink/etc/hostname', '/proc/1/environ', 'a/../../etc/shadow']) {
      const ts = await env.step({ tool: 'file_read', params: { path } });
      expect(ts.observation, path).toMatch(/^Error: refused: .* outside the work directory \/work/);
      expect(ts.info.error).toBeDefined();
    }
    const w = await env.step({ tool: 'file_write', params: { path: '../tmp/x', content: 'x' } });
    expect(w.observation).toMatch(/refused/);
    const s = await env.step({ tool: 'search', params: { pattern: 'root', path: '/etc' } });
    expect(s.observation).toMatch(/refused/);
    await shell('rm -f passwd-link rootlink');
  });

  it('host files are not reachable through /proc or mounts: nothing from the host is mounted', async () => {
    const ts = await shell('cat /proc/1/root/etc/hostname 2>&1; ls /var/run/docker.sock 2>&1; cut -d" " -f2 /proc/mounts | sort | tr "\\n" " "');
    // PID 1 belongs to another uid: its root is not readable; the Docker socket is not there.
    expect(ts.observation).toMatch(/\/proc\/1\/root\/etc\/hostname: Permission denied/);
    expect(ts.observation).toMatch(/docker\.sock'?: No such file/);
    expect(ts.observation).not.toContain(hostname());
    // Only Docker's own per-container files (and its read-only docker-init) besides the root, /proc, /sys, /dev and the tmpfs areas.
    const mounts = ts.observation.split('\n')[2]?.trim().split(' ') ?? [];
    const allowed = /^(\/|\/proc.*|\/sys.*|\/dev.*|\/work|\/tmp|\/home\/agent|\/etc\/(hosts|hostname|resolv\.conf)|\/usr\/sbin\/docker-init)$/;
    expect(mounts.filter((m) => !allowed.test(m))).toEqual([]);
  });

  it('privilege escalation fails: no setuid gain, no capabilities, read-only root', async () => {
    const ts = await shell(
      'cp /bin/bash /tmp/b && chmod u+s /tmp/b && /tmp/b -p -c id; su -c id root </dev/null 2>&1 | tail -1; grep CapEff /proc/self/status; touch /usr/bin/x 2>&1; cat /proc/self/status | grep NoNewPrivs',
    );
    expect(ts.observation).toContain('uid=1000(agent)');
    expect(ts.observation).not.toMatch(/uid=0/);
    expect(ts.observation).toMatch(/CapEff:\s+0000000000000000/);
    expect(ts.observation).toMatch(/Read-only file system/);
    expect(ts.observation).toMatch(/NoNewPrivs:\s+1/);
    await stillWorks();
  });

  it('killing PID 1 or every process does not take the sandbox down', async () => {
    const ts = await shell('kill -9 1; kill -9 -1; echo done');
    expect(ts.info.exitCode).not.toBeUndefined();
    await stillWorks();
  });

  it('a container that dies between steps is replaced transparently before the next step', async () => {
    await env.step({ tool: 'file_write', params: { path: 'note.txt', content: 'x' } });
    const sb = env.currentSandbox;
    if (!sb) throw new Error('no sandbox');
    const { dockerClient } = await import('../src/sandbox/docker.js');
    await dockerClient().getContainer(sb.id).kill();
    const ts = await shell('echo back; ls');
    expect(ts.info.sandboxReplaced).toBe(true);
    expect(ts.observation).toMatch(/replaced; \/work was restored to the task's initial state/);
    expect(ts.observation).not.toContain('note.txt');
    await stillWorks();
  }, 60_000);
});
