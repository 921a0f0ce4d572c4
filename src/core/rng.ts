import { ConfigError } from './errors.js';

/**
 * A small seeded PRNG (sfc32 seeded through splitmix32). Deterministic across processes and
 * platforms, so the same seed always gives the same episode; `Math.random` never is.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /**
   * @param seed Any safe integer. Seeds in [0, 2^32) seed the generator as they always have; the bits above
   *   (and the sign) go into a state word of their own, so `2^32` or `-1` is not `0` or `2^32 - 1` again.
   */
  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) throw new TypeError(`Rng: seed must be a safe integer, got ${seed}`);
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    const high = Math.floor(seed / 4294967296);
    if (high !== 0) {
      s = high >>> 0;
      this.c = (this.c ^ next()) >>> 0;
    }
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** A uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** A uniform float in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** A uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    if (max < min) throw new RangeError(`Rng.int: max ${max} < min ${min}`);
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A uniformly chosen element. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick: empty list');
    return items[this.int(0, items.length - 1)] as T;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /** An independent generator derived from this one (for sub-streams that must not shift the parent). */
  fork(): Rng {
    return new Rng(this.nextUint32());
  }
}

/** A fresh non-reproducible seed, for when the caller gave none. */
export function entropySeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}

/**
 * `f(seed, ...parts)`: a non-negative 31-bit seed derived from a base seed and integer parts
 * (murmur3's finaliser applied after each part).
 */
export function mixSeed(seed: number, ...parts: number[]): number {
  if (!Number.isInteger(seed)) throw new ConfigError(`seed must be an integer, got ${seed}`);
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (const p of [...parts, parts.length]) {
    h = (h ^ (p >>> 0)) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
    h = (h ^ (h >>> 16)) >>> 0;
    // Fold in the high part of big seeds so seeds ≥ 2^32 still differ.
    h = (h ^ Math.floor(Math.abs(p) / 4294967296)) >>> 0;
  }
  return h >>> 1;
}
