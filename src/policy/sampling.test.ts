import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import { argmax, checkSampling, logSoftmaxAt, sampleToken } from './sampling.js';

function counts(logits: number[], o: { temperature: number; topP: number }, draws: number, seed = 1): number[] {
  const rng = new Rng(seed);
  const c = logits.map(() => 0);
  for (let i = 0; i < draws; i++) (c[sampleToken(logits, o, rng)] as number)++;
  return c;
}

describe('logSoftmaxAt', () => {
  it('equals log(softmax) computed by hand, and is stable for large logits', () => {
    const logits = [1, 2, 3];
    const z = Math.exp(1) + Math.exp(2) + Math.exp(3);
    expect(logSoftmaxAt(logits, 2)).toBeCloseTo(3 - Math.log(z), 12);
    expect(logSoftmaxAt(logits, 0)).toBeCloseTo(1 - Math.log(z), 12);
    expect(logSoftmaxAt(new Float32Array([1000, 1000]), 0)).toBeCloseTo(Math.log(0.5), 12);
    expect(logSoftmaxAt([0, -Infinity], 0)).toBe(0);
  });
});

describe('sampleToken', () => {
  it('temperature 0 is argmax, first index on ties, and draws nothing from the rng', () => {
    const rng = new Rng(3);
    const before = new Rng(3).next();
    expect(sampleToken([0.1, 5, 5, -1], { temperature: 0, topP: 0.1 }, rng)).toBe(1);
    expect(argmax(new Float32Array([-3, -1, -2]))).toBe(1);
    expect(rng.next()).toBe(before);
  });

  it('follows softmax(logits / T): frequencies match the probabilities', () => {
    const logits = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];
    const c = counts(logits, { temperature: 1, topP: 1 }, 20_000);
    expect((c[0] as number) / 20_000).toBeCloseTo(0.5, 1);
    expect((c[1] as number) / 20_000).toBeCloseTo(0.3, 1);
    expect((c[2] as number) / 20_000).toBeCloseTo(0.2, 1);
    // T = 0.5 squares the odds: 0.25 : 0.09 : 0.04.
    const sharp = counts(logits, { temperature: 0.5, topP: 1 }, 20_000);
    expect((sharp[0] as number) / 20_000).toBeCloseTo(0.25 / 0.38, 1);
  });

  it('top-p keeps the smallest most-probable set reaching the mass', () => {
    const logits = [Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)];
    // 0.5 < 0.7 ≤ 0.8: tokens 0 and 1 only, renormalised to 5/8, 3/8.
    const c = counts(logits, { temperature: 1, topP: 0.7 }, 10_000);
    expect(c[2]).toBe(0);
    expect(c[3]).toBe(0);
    expect((c[0] as number) / 10_000).toBeCloseTo(0.625, 1);
    // A tiny top-p keeps just the best token.
    expect(counts(logits, { temperature: 1, topP: 0.01 }, 100)).toEqual([100, 0, 0, 0]);
  });

  it('never picks a token with zero probability', () => {
    expect(counts([0, -Infinity, 0], { temperature: 1, topP: 1 }, 2000)[1]).toBe(0);
  });

  it('is deterministic for a seed', () => {
    const logits = Array.from({ length: 50 }, (_, i) => Math.sin(i));
    const draw = (seed: number): number[] => {
      const rng = new Rng(seed);
      return Array.from({ length: 20 }, () => sampleToken(logits, { temperature: 0.8, topP: 0.9 }, rng));
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
  });
});

describe('checkSampling', () => {
  it('rejects bad settings, naming the place', () => {
    expect(() => checkSampling({ temperature: -1, topP: 1 }, 'local:x')).toThrow(ConfigError);
    expect(() => checkSampling({ temperature: 1, topP: 0 }, 'local:x')).toThrow(/local:x: top-p must be in \(0, 1\], got 0/);
    expect(() => checkSampling({ temperature: 1, topP: 1.5 }, 'local:x')).toThrow(/top-p/);
    expect(() => checkSampling({ temperature: 0, topP: 1 }, 'local:x')).not.toThrow();
  });
});
