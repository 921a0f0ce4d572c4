import { describe, expect, it } from 'vitest';
import { mixSeed, Rng } from './rng.js';

describe('Rng', () => {
  it('is reproducible and pinned to fixed values across platforms', () => {
    const a = new Rng(123);
    const b = new Rng(123);
    const xs = Array.from({ length: 5 }, () => a.nextUint32());
    expect(Array.from({ length: 5 }, () => b.nextUint32())).toEqual(xs);
    // Pinned so that a change to the generator (which would change every seeded episode) is noticed.
    expect(new Rng(0).nextUint32()).toBe(4205396811);
    expect(new Rng(1).nextUint32()).toBe(1828152527);
    expect(new Rng(4294967295).nextUint32()).toBe(1413747962);
  });

  it('uses every bit of a seed: 2^32 is not 0 and -1 is not 2^32 - 1', () => {
    const first = (seed: number): number[] => {
      const r = new Rng(seed);
      return [r.nextUint32(), r.nextUint32()];
    };
    const seeds = [0, 1, 4294967295, 4294967296, 4294967297, -1, -4294967296, 2 ** 40, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    expect(new Set(seeds.map((s) => first(s).join())).size).toBe(seeds.length);
    expect(first(2 ** 40)).toEqual(first(2 ** 40));
    expect(() => new Rng(2 ** 53)).toThrow(/seed must be a safe integer/);
    expect(() => new Rng(1.5)).toThrow(/seed must be a safe integer/);
  });

  it('draws integers in range with roughly uniform frequencies', () => {
    const rng = new Rng(7);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 40_000; i++) counts[rng.int(0, 3)]! += 1;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500);
    expect(() => rng.int(3, 2)).toThrow(RangeError);
    expect(() => new Rng(1.5)).toThrow(TypeError);
  });

  it('shuffles without losing elements and forks independent streams', () => {
    const rng = new Rng(9);
    const s = rng.shuffle([1, 2, 3, 4, 5, 6]);
    expect([...s].sort()).toEqual([1, 2, 3, 4, 5, 6]);
    const parent = new Rng(5);
    const child = parent.fork();
    expect(child.next()).not.toBe(parent.next());
  });
});

describe('mixSeed', () => {
  it('is deterministic, non-negative, 31-bit and sensitive to every part', () => {
    expect(mixSeed(1, 2, 3)).toBe(mixSeed(1, 2, 3));
    const seen = new Set<number>();
    for (let s = 0; s < 50; s++) for (let i = 0; i < 50; i++) seen.add(mixSeed(s, 0x5eed, i));
    expect(seen.size).toBe(2500);
    for (const v of seen) expect(v >= 0 && v < 2 ** 31 && Number.isInteger(v)).toBe(true);
    expect(mixSeed(1, 2)).not.toBe(mixSeed(1, 2, 0));
    expect(() => mixSeed(1.5)).toThrow(/seed must be an integer/);
  });
});
