import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { containerSpecFor, DEFAULT_SANDBOX_CONFIG, resolveConfig } from './config.js';
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
