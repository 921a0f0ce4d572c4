import { describe, expect, it } from 'vitest';
import { SLAB_MAX_ARRAY_BYTES, slabArray } from './slab.js';

describe('slab arrays', () => {
  it('are zeroed, aligned and never overlap, across slabs', () => {
    const arrays: Float64Array[] = [];
    // Enough to fill several 64 KiB slabs, with lengths that are not multiples of 8 bytes.
    for (let i = 0; i < 400; i++) {
      const bytes = slabArray(Uint8Array, (i % 7) + 1);
      expect([...bytes].every((b) => b === 0)).toBe(true);
      bytes.fill(0xff);
      const doubles = slabArray(Float64Array, 50 + (i % 13));
      expect(doubles.byteOffset % 8).toBe(0);
      expect([...doubles].every((x) => x === 0)).toBe(true);
      doubles.fill(i);
      arrays.push(doubles);
    }
    // Writing each array never reached another: every one still holds its own value.
    arrays.forEach((a, i) => expect([...a].every((x) => x === i)).toBe(true));
    expect(new Set(arrays.map((a) => a.buffer)).size).toBeGreaterThan(1);
  });

  it('gives a large array a buffer of its own', () => {
    const big = slabArray(Int32Array, SLAB_MAX_ARRAY_BYTES / 4 + 1);
    expect(big.byteOffset).toBe(0);
    expect(big.buffer.byteLength).toBe(big.byteLength);
    const small = slabArray(Int32Array, 4);
    expect(small.buffer).not.toBe(big.buffer);
  });
});
