import { afterAll, beforeAll, expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import { LABEL_DETACHED, LABEL_OWNER_PID, LABEL_SANDBOX, resolveConfig } from './config.js';
import { dockerClient } from './docker.js';
import { gcSandboxes } from './gc.js';
import { Sandbox } from './sandbox.js';
import { packTar, unpackTar } from './tar.js';

const docker = requires.docker();

docker.describe('Sandbox', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await Sandbox.create({ task: 'unit' });
  });
  afterAll(async () => {
    await sb?.destroy();
  });

  it('runs argv as the agent user in /work and reports exit codes', async () => {
    const r = await sb.exec(['sh', '-c', 'id -u; pwd; echo err >&2; exit 3']);
    // stdout and stderr are interleaved as they arrive; their relative order is not guaranteed.
    expect(r.output.split('\n').sort()).toEqual(['', '/work', '1000', 'err']);
    expect(r.exitCode).toBe(3);
    expect(r.truncated).toBe(false);
  });

  it('moves files in and out as tar streams and resets /work to an archive', async () => {
    const archive = await packTar([{ path: 'pkg/a.py', content: 'A = 1\n' }, { path: 'b.txt', content: 'b\n' }]);
    await sb.reset(archive);
    await sb.shell('echo changed > b.txt; echo new > c.txt; sleep 60 &');
    const entries = await unpackTar(await sb.getTar());
    expect(entries.filter((e) => e.type === 'file').map((e) => e.path).sort()).toEqual(['b.txt', 'c.txt', 'pkg/a.py']);
    await sb.reset(archive);
    const after = await sb.shell('cat b.txt; ls; ps -e -o comm= | grep -c sleep');
    expect(after.output).toBe('b\nb.txt\npkg\n1\n'); // only the keeper sleeps
  });

  it('applies the time limit inside the container', async () => {
    const r = await sb.shell('sleep 30', { timeoutS: 1 });
    expect(r).toMatchObject({ exitCode: 137, timedOut: true, hung: false });
    expect(r.durationMs).toBeLessThan(10_000);
  });

  it('the engine applied the hardening (inspect) and the agent sees it', async () => {
    const info = await dockerClient().getContainer(sb.id).inspect();
    expect(info.HostConfig).toMatchObject({ NetworkMode: 'none', CapDrop: ['ALL'], ReadonlyRootfs: true, PidsLimit: 256, Init: true, Privileged: false });
    expect(info.HostConfig.SecurityOpt).toEqual(['no-new-privileges']); // default seccomp: no seccomp=unconfined
    expect(info.HostConfig.Binds ?? []).toEqual([]);
    expect(info.Mounts).toEqual([]);
    const r = await sb.shell('grep -E "^(Seccomp|NoNewPrivs|CapEff):" /proc/self/status | tr -s "\\t " " "');
    expect(r.output).toMatch(/Seccomp: 2/);
    expect(r.output).toMatch(/NoNewPrivs: 1/);
    expect(r.output).toMatch(/CapEff: 0000000000000000/);
  });

  it('names the missing image and how to build it', async () => {
    await expect(Sandbox.create({ config: { image: 'gymflow/no-such-image:0' }, skipGc: true })).rejects.toThrow(/gymflow\/no-such-image:0.*gymflow sandbox build-image/);
  });

  it('gc removes sandboxes whose owner process is gone and keeps live ones', async () => {
    const d = dockerClient();
    const orphan = await d.createContainer({
      Image: sb.config.image,
      Cmd: ['true'],
      Labels: { [LABEL_SANDBOX]: '1', [LABEL_OWNER_PID]: '999999999', 'gymflow.sandbox.owner-host': (await import('node:os')).hostname() },
    });
    const report = await gcSandboxes(d);
    expect(report.removed).toContain(orphan.id);
    expect(report.kept).toContain(sb.id);
  });

  it('gives up on an exec that never returns and replaces the container, restoring /work', async () => {
    const archive = await packTar([{ path: 'kept.txt', content: 'initial\n' }]);
    await sb.reset(archive);
    const before = sb.id;
    const d = dockerClient();
    // A frozen container: `timeout` inside cannot fire, so only the host-side fallback can end the call. It is
    // frozen once the command runs, not after a fixed wait: frozen earlier, the exec could not start; later than
    // `timeoutS`, the command would simply time out. 3 s leaves a busy machine time to see it running.
    const pending = sb.exec(['sleep', '30'], { timeoutS: 3, graceS: 1 });
    const container = d.getContainer(before);
    const deadline = Date.now() + 30_000;
    while (!((await container.top()) as { Processes?: string[][] }).Processes?.some((p) => p.join(' ').includes('sleep 30'))) {
      if (Date.now() > deadline) throw new Error('`sleep 30` did not start in the sandbox within 30 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    await container.pause();
    const r = await pending;
    expect(r).toMatchObject({ hung: true, replaced: true });
    expect(r.output).toMatch(/replaced; \/work was restored/);
    expect(sb.id).not.toBe(before);
    expect((await sb.exec(['cat', 'kept.txt'])).output).toBe('initial\n');
    await expect(d.getContainer(before).inspect()).rejects.toThrow(/no such container/i);
  }, 60_000);

  it('attach recovers the real hardening settings, and a replacement container gets them too', async () => {
    const config = { memoryMiB: 300, cpus: 0.5, pidsLimit: 100, workDirMiB: 32, tmpMiB: 16, execTimeoutS: 12, outputCapBytes: 4096, labels: { 'x.test': 'y' } };
    const made = await Sandbox.create({ config, detached: true, skipGc: true });
    try {
      expect(made.config).toEqual(resolveConfig(config));
      const attached = await Sandbox.attach(made.id);
      expect(attached.config).toEqual(made.config);
      expect(attached.detached).toBe(true);
      await attached.replace();
      const info = await dockerClient().getContainer(attached.id).inspect();
      expect(info.HostConfig).toMatchObject({ Memory: 300 * 1024 * 1024, NanoCpus: 5e8, PidsLimit: 100 });
      expect(info.HostConfig.Tmpfs?.['/work']).toMatch(/size=32m/);
      expect(info.Config.Labels).toMatchObject({ 'x.test': 'y', [LABEL_DETACHED]: '1' });
      expect((await Sandbox.attach(attached.id)).config).toEqual(made.config);
      await attached.destroy();
    } finally {
      await made.destroy();
    }
  }, 60_000);

  it('remove takes a stopped sandbox away, refuses a container that is not one; gc removes a stopped detached sandbox', async () => {
    const d = dockerClient();
    const stopped = await Sandbox.create({ detached: true, skipGc: true });
    const other = await d.createContainer({ Image: sb.config.image, Cmd: ['true'], Labels: { 'x.test': '1' } });
    try {
      await d.getContainer(stopped.id).stop({ t: 0 });
      await expect(Sandbox.attach(stopped.id)).rejects.toThrow(/is not running \(exited\); `gymflow sandbox destroy/);
      await Sandbox.remove(stopped.id);
      await expect(d.getContainer(stopped.id).inspect()).rejects.toThrow(/no such container/i);
      await expect(Sandbox.remove(other.id)).rejects.toThrow(/is not a gymflow sandbox/);
      const running = await Sandbox.create({ detached: true, skipGc: true });
      const exited = await Sandbox.create({ detached: true, skipGc: true });
      await d.getContainer(exited.id).stop({ t: 0 });
      const report = await gcSandboxes(d);
      expect(report.removed).toContain(exited.id);
      expect(report.kept).toContain(running.id);
      await running.destroy();
    } finally {
      await other.remove({ force: true });
      await stopped.destroy();
    }
  }, 60_000);
});
