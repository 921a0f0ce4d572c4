import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config.js';
import { poolKey, SandboxPool } from './pool.js';
import type { Sandbox } from './sandbox.js';

/** A stand-in for a Sandbox: records restores and destroys; `failRestore` makes its next restore fail. */
class FakeSandbox {
  static next = 0;
  readonly id = `fake${FakeSandbox.next++}`;
  readonly config = resolveConfig();
  readonly detached = false;
  replacements = 0;
  isDestroyed = false;
  failRestore = false;
  restored: Buffer[] = [];
  inPlace = 0;
  async restoreExact(archive: Buffer): Promise<void> {
    await new Promise((r) => setTimeout(r, 5));
    if (this.failRestore) throw new Error('restore exploded');
    this.restored.push(archive);
  }
  async reset(archive: Buffer): Promise<void> {
    this.inPlace += 1;
    this.restored.push(archive);
  }
  async destroy(): Promise<void> {
    this.isDestroyed = true;
  }
}

const A = Buffer.from('task A');
const B = Buffer.from('task B');
const C = Buffer.from('task C');

function setup(o: { sparesPerKey?: number; maxSpares?: number; failCreate?: boolean } = {}): { pool: SandboxPool; made: FakeSandbox[]; logs: string[] } {
  const made: FakeSandbox[] = [];
  const logs: string[] = [];
  const pool = new SandboxPool({
    ...o,
    log: (m) => logs.push(m),
    create: async () => {
      if (o.failCreate) throw new Error('engine said no');
      const f = new FakeSandbox();
      made.push(f);
      return f as unknown as Sandbox;
    },
  });
  return { pool, made, logs };
}

const fake = (s: Sandbox): FakeSandbox => s as unknown as FakeSandbox;

describe('SandboxPool (no engine: fake sandboxes)', () => {
  it('misses restore in place and prepare a spare; the next reset to the task is a hit and recycles the used one', async () => {
    const { pool, made } = setup();
    const first = await pool.reset(undefined, A);
    expect(first.hit).toBe(false);
    expect(fake(first.sandbox).inPlace).toBe(1);
    await pool.idle();
    expect(pool.size).toBe(1);
    const second = await pool.reset(first.sandbox, A);
    expect(second.hit).toBe(true);
    expect(second.sandbox).not.toBe(first.sandbox);
    expect(fake(second.sandbox).inPlace).toBe(0); // restored in the background, before it was handed out
    await pool.idle();
    // The used sandbox was restored (strictly) and is the next spare.
    expect(fake(first.sandbox).restored).toEqual([A, A]);
    const third = await pool.reset(second.sandbox, A);
    expect(third).toMatchObject({ hit: true, sandbox: first.sandbox });
    expect(made.length).toBe(2);
    expect(pool.stats).toMatchObject({ hits: 2, misses: 1, created: 1, recycled: 2, errors: 0 });
    await pool.close();
  });

  it('concurrent resets never hand out the same spare twice', async () => {
    const { pool } = setup({ sparesPerKey: 1, maxSpares: 4 });
    const a = (await pool.reset(undefined, A)).sandbox;
    const b = (await pool.reset(undefined, A)).sandbox;
    await pool.idle();
    expect(pool.size).toBe(1);
    const [r1, r2] = await Promise.all([pool.reset(a, A), pool.reset(b, A)]);
    expect([r1.hit, r2.hit].sort()).toEqual([false, true]);
    expect(r1.sandbox).not.toBe(r2.sandbox);
    await pool.close();
  });

  it('a replaced, destroyed or failing sandbox never enters the pool; failures are logged, never thrown', async () => {
    const { pool, logs } = setup();
    const a = (await pool.reset(undefined, A)).sandbox;
    await pool.idle();
    fake(a).replacements = 1;
    const r = await pool.reset(a, A); // hit: `a` goes to the recycler, which must refuse it
    expect(r.hit).toBe(true);
    await pool.idle();
    expect(fake(a).isDestroyed).toBe(true);
    expect(pool.size).toBe(0);

    const b = r.sandbox;
    fake(b).failRestore = true;
    pool.release(b, A);
    await pool.idle();
    expect(fake(b).isDestroyed).toBe(true);
    expect(pool.size).toBe(0);
    expect(pool.stats.errors).toBe(1);
    expect(logs.join('\n')).toMatch(/could not recycle a used sandbox; the container was destroyed: restore exploded/);
    await pool.close();
  });

  it('a spare that cannot be created is logged, not thrown', async () => {
    const { pool, logs } = setup({ failCreate: true });
    pool.prepare(A);
    await pool.idle();
    expect(pool.size).toBe(0);
    expect(logs.join('\n')).toMatch(/could not prepare a spare.*engine said no/);
    await pool.close();
  });

  it('bounds spares per key and in all; a full pool retargets the least recently used key', async () => {
    const { pool, made } = setup({ sparesPerKey: 1, maxSpares: 2 });
    pool.prepare(A);
    pool.prepare(A); // the key already has its share (being prepared)
    pool.prepare(B);
    await pool.idle();
    expect(made.length).toBe(2);
    expect(pool.size).toBe(2);
    pool.prepare(C); // full: A (least recently used) is restored to C
    await pool.idle();
    expect(made.length).toBe(2);
    expect(pool.stats.retargeted).toBe(1);
    const cfg = resolveConfig();
    expect([pool.readyFor(cfg, A), pool.readyFor(cfg, B), pool.readyFor(cfg, C)]).toEqual([0, 1, 1]);
    // A recycled sandbox whose key already has its spare is destroyed rather than kept.
    const extra = (await pool.reset(undefined, Buffer.from('D'))).sandbox;
    await pool.idle();
    pool.release(extra, C);
    await pool.idle();
    expect(fake(extra).isDestroyed).toBe(true);
    expect(pool.size).toBeLessThanOrEqual(2);
    await pool.close();
  });

  it('close destroys ready spares and those still being prepared; a closed pool only restores in place', async () => {
    const { pool, made } = setup();
    pool.prepare(A);
    await pool.idle();
    pool.prepare(B); // in flight when close starts
    await pool.close();
    expect(made.length).toBe(2);
    expect(made.every((m) => m.isDestroyed)).toBe(true);
    const r = await pool.reset(undefined, A);
    expect(r.hit).toBe(false);
    await pool.idle();
    expect(pool.size).toBe(0);
  });

  it('the last unref clears the spares but the pool stays usable', async () => {
    const { pool, made } = setup();
    pool.ref();
    pool.ref();
    pool.prepare(A);
    await pool.idle();
    await pool.unref();
    expect(pool.size).toBe(1);
    await pool.unref();
    expect(pool.size).toBe(0);
    expect(made[0]?.isDestroyed).toBe(true);
    pool.prepare(A);
    await pool.idle();
    expect(pool.size).toBe(1);
    await pool.close();
  });

  it('keys on the whole config and the archive', () => {
    const base = resolveConfig();
    expect(poolKey(base, A)).toBe(poolKey(resolveConfig({}), Buffer.from('task A')));
    expect(poolKey(base, A)).not.toBe(poolKey(base, B));
    expect(poolKey(base, A)).not.toBe(poolKey(resolveConfig({ memoryMiB: 512 }), A));
    expect(poolKey(resolveConfig({ labels: { a: '1', b: '2' } }), A)).toBe(poolKey(resolveConfig({ labels: { b: '2', a: '1' } }), A));
    expect(() => new SandboxPool({ maxSpares: -1 })).toThrow(/maxSpares/);
  });
});
