import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { configFromInspect, containerSpecFor, DEFAULT_SANDBOX_CONFIG, hardeningOverrides, resolveConfig, type SandboxConfig } from './config.js';
import { CappedOutput } from './exec.js';

describe('sandbox hardening', () => {
  it('is on by default: no network, no capabilities, no-new-privileges, read-only root, limits, non-root, init, no mounts', () => {
    const warnings: string[] = [];
    const spec = containerSpecFor(resolveConfig(), { 'gymflow.sandbox': '1' }, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
    expect(spec.User).toBe('65534:65534');
    expect(spec.HostConfig).toMatchObject({
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      PidsLimit: 256,
      Memory: 1024 * 1024 * 1024,
      MemorySwap: 1024 * 1024 * 1024,
      NanoCpus: 1e9,
      Init: true,
      Privileged: false,
      Binds: [],
      Mounts: [],
    });
    expect(Object.keys(spec.HostConfig?.Tmpfs ?? {}).sort()).toEqual(['/home/agent', '/tmp', '/work']);
    expect(JSON.stringify(spec)).not.toContain('docker.sock');
    expect(DEFAULT_SANDBOX_CONFIG.user).toBe('1000:1000');
  });

  it('allows overrides, each with a logged warning', () => {
    const warnings: string[] = [];
    const spec = containerSpecFor(resolveConfig({ networkMode: 'bridge', readonlyRootfs: false, user: '0:0' }), {}, (m) => warnings.push(m));
    expect(spec.HostConfig?.NetworkMode).toBe('bridge');
    expect(warnings).toHaveLength(3);
    expect(warnings.join('\n')).toMatch(/networkMode=bridge.*\n.*readonlyRootfs=false.*\n.*user=0:0/);
  });
});

describe('resolveConfig', () => {
  it('rejects unknown keys and wrong types', () => {
    expect(() => resolveConfig({ memoryMb: 5 } as never)).toThrow(/unknown key 'memoryMb'; known: image, networkMode/);
    expect(() => resolveConfig({ pidsLimit: '5' } as never)).toThrow(/pidsLimit must be a number, got "5"/);
    expect(resolveConfig({ memoryMiB: 512 }).memoryMiB).toBe(512);
  });

  it('refuses limits that Docker would read as "no limit" (0) or refuse late, naming the field and the value', () => {
    const refused: [Partial<SandboxConfig>, RegExp][] = [
      [{ memoryMiB: 0 }, /memoryMiB must be at least 6 \(Docker's minimum; 0 would mean no memory limit\), got 0/],
      [{ memoryMiB: -5 }, /memoryMiB must be at least 6 .*got -5/],
      [{ memoryMiB: 5 }, /memoryMiB must be at least 6 .*got 5/],
      [{ memoryMiB: 100.5 }, /memoryMiB must be an integer, got 100.5/],
      [{ cpus: 0 }, /cpus must be at least 0.01 .*got 0/],
      [{ cpus: 1e-10 }, /cpus must be at least 0.01 .*got 1e-10/],
      [{ cpus: -1 }, /cpus must be at least 0.01 .*got -1/],
      [{ workDirMiB: 0 }, /workDirMiB must be at least 1 \(a tmpfs of size 0 has no size limit\), got 0/],
      [{ tmpMiB: -1 }, /tmpMiB must be at least 1 .*got -1/],
      [{ execTimeoutS: 0 }, /execTimeoutS must be at least 1 .*got 0/],
      [{ outputCapBytes: 0 }, /outputCapBytes must be at least 64 .*got 0/],
      [{ memoryMiB: Infinity }, /memoryMiB must be a finite number, got Infinity/],
      [{ cpus: NaN }, /cpus must be a finite number, got NaN/],
      [{ pidsLimit: 1.5 }, /pidsLimit must be an integer, got 1.5/],
      [{ capDrop: [1] as never }, /capDrop must be an array of strings/],
      [{ labels: { a: 1 } as never }, /labels must map strings to strings/],
    ];
    for (const [overrides, message] of refused) expect(() => resolveConfig(overrides), JSON.stringify(overrides)).toThrow(message);
    expect(resolveConfig({ memoryMiB: 6, cpus: 0.01, workDirMiB: 1, outputCapBytes: 64 })).toMatchObject({ memoryMiB: 6, cpus: 0.01, workDirMiB: 1 });
    // No limit on processes stays a documented override, with its warning.
    expect(hardeningOverrides(resolveConfig({ pidsLimit: 0 }))).toEqual(['pidsLimit=0 (default 256): no process limit']);
  });

  it('warns about a custom or disabled seccomp profile and a keeper that runs as the exec user', () => {
    expect(hardeningOverrides(resolveConfig({ seccompProfile: 'unconfined' }))).toEqual(['seccompProfile=unconfined: no syscall filter']);
    expect(hardeningOverrides(resolveConfig({ seccompProfile: '{"defaultAction":"SCMP_ACT_ALLOW"}' }))[0]).toMatch(/custom profile replaces Docker's default/);
    expect(hardeningOverrides(resolveConfig({ keeperUser: '1000:1000' }))[0]).toMatch(/keeperUser=1000:1000 is the exec user/);
  });
});

describe('configFromInspect', () => {
  it("recovers every setting from the engine's record of the container the spec describes", () => {
    const config = resolveConfig({
      image: 'img:1',
      networkMode: 'bridge',
      capDrop: ['ALL', 'NET_RAW'],
      noNewPrivileges: false,
      seccompProfile: '{"defaultAction":"SCMP_ACT_ERRNO"}',
      readonlyRootfs: false,
      workDirMiB: 32,
      tmpMiB: 8,
      pidsLimit: 100,
      memoryMiB: 300,
      cpus: 0.5,
      user: '1001:1001',
      keeperUser: '65533:65533',
      init: false,
      execTimeoutS: 12,
      outputCapBytes: 4096,
      labels: { team: 'x' },
    });
    const spec = containerSpecFor(config, { 'gymflow.sandbox': '1', 'gymflow.sandbox.task': 't' }, () => undefined);
    const hc = spec.HostConfig ?? {};
    // What `docker inspect` returns for it (a PidsLimit of 0 comes back as null).
    const inspected = {
      Config: { Image: spec.Image as string, User: spec.User as string, Labels: spec.Labels as Record<string, string> },
      HostConfig: { ...hc, PidsLimit: hc.PidsLimit === 0 ? null : hc.PidsLimit },
    };
    expect(configFromInspect(inspected)).toEqual(config);
    const defaults = resolveConfig({ pidsLimit: 0 });
    const spec2 = containerSpecFor(defaults, {}, () => undefined);
    expect(configFromInspect({ Config: { Image: spec2.Image as string, User: spec2.User as string, Labels: spec2.Labels as Record<string, string> }, HostConfig: { ...spec2.HostConfig, PidsLimit: null } })).toEqual(defaults);
  });
});

describe('CappedOutput', () => {
  it('keeps head and tail and names the bytes left out', () => {
    const out = new CappedOutput(10);
    out.push(Buffer.from('0123456789abcdefghij'));
    expect(out.truncated).toBe(true);
    expect(out.text()).toBe('01234\n[... output truncated: 10 bytes omitted of 20 bytes total ...]\nfghij');
    const small = new CappedOutput(10);
    small.push(Buffer.from('abc'));
    small.push(Buffer.from('def'));
    expect(small.text()).toBe('abcdef');
  });

  it('cuts on UTF-8 character boundaries: no U+FFFD where the cap falls inside a character', () => {
    // 'é' is 2 bytes, '€' 3, '🎉' 4: every cap position lands inside some character somewhere.
    const text = 'aé€🎉'.repeat(20);
    for (let cap = 64; cap < 80; cap++) {
      const out = new CappedOutput(cap);
      const bytes = Buffer.from(text);
      for (let i = 0; i < bytes.length; i += 7) out.push(bytes.subarray(i, i + 7)); // chunks split characters too
      const shown = out.text();
      expect(shown, `cap ${cap}`).not.toContain('\uFFFD');
      const m = /^([^]*)\n\[\.\.\. output truncated: (\d+) bytes omitted of (\d+) bytes total \.\.\.\]\n([^]*)$/.exec(shown);
      expect(m, `cap ${cap}`).not.toBeNull();
      const [, head, omitted, total, tail] = m as unknown as string[];
      expect(text.startsWith(head as string) && text.endsWith(tail as string)).toBe(true);
      expect(Buffer.byteLength(head as string) + Number(omitted) + Buffer.byteLength(tail as string)).toBe(Number(total));
      expect(Buffer.byteLength(head as string)).toBeGreaterThan(cap / 2 - 4);
    }
    // Under the cap nothing is cut, even where the head/tail halves meet inside a character.
    const whole = new CappedOutput(64);
    whole.push(Buffer.from('x'.repeat(31) + '€' + 'y'.repeat(20)));
    expect(whole.text()).toBe('x'.repeat(31) + '€' + 'y'.repeat(20));
  });
});

describe('engine address', () => {
  it('comes from DOCKER_HOST (dockerode reads it by itself)', () => {
    const saved = process.env.DOCKER_HOST;
    try {
      process.env.DOCKER_HOST = 'tcp://10.1.2.3:2375';
      const modem = (new Docker() as unknown as { modem: { host: string; port: string; protocol: string } }).modem;
      expect([modem.host, String(modem.port), modem.protocol]).toEqual(['10.1.2.3', '2375', 'http']);
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });
});
