import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/rng.js';
import { HashTable64, Hasher, Interner, hashParams, safeCanonicalJson, sameAction, sameFlatParams } from './hash.js';

function key(tool: string, params: Record<string, unknown>, interner = new Interner()): string {
  const h = new Hasher();
  hashParams(h, 1, tool, params, interner);
  return `${h.h1}:${h.h2}`;
}

describe('hashing', () => {
  it('hashes params canonically: key order and undefined members do not matter', () => {
    const interner = new Interner();
    expect(key('t', { a: 1, b: 'x' }, interner)).toBe(key('t', { b: 'x', a: 1 }, interner));
    expect(key('t', { a: 1, b: undefined }, interner)).toBe(key('t', { a: 1 }, interner));
    expect(key('t', { a: { y: 1, x: [1, 2] } }, interner)).toBe(key('t', { a: { x: [1, 2], y: 1 } }, interner));
  });

  it('distinguishes tools, types, values and key/value boundaries', () => {
    const interner = new Interner();
    const keys = [
      key('t', { a: 1 }, interner),
      key('u', { a: 1 }, interner),
      key('t', { a: '1' }, interner),
      key('t', { a: 1.5 }, interner),
      key('t', { a: true }, interner),
      key('t', { a: null }, interner),
      key('t', { a: [1] }, interner),
      key('t', { ab: 'c' }, interner),
      key('t', { a: 'bc' }, interner),
      key('t', { a: 'x'.repeat(100) }, interner),
      key('t', { a: `${'x'.repeat(99)}y` }, interner),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    expect(key('t', { a: 'x'.repeat(100) }, interner)).toBe(keys[9]);
  });

  it('keeps values with their keys when combining members order-independently', () => {
    const interner = new Interner();
    expect(key('t', { a: 'x', b: 'y' }, interner)).not.toBe(key('t', { a: 'y', b: 'x' }, interner));
    expect(key('t', { a: 1, b: 2 }, interner)).not.toBe(key('t', { a: 1 }, interner));
    expect(key('t', { b: 2, a: 1, c: undefined }, interner)).toBe(key('t', { a: 1, b: 2 }, interner));
  });

  it('confirms matches exactly', () => {
    expect(sameAction({ tool: 't', params: { a: 1, b: 2 } }, { tool: 't', params: { b: 2, a: 1 } })).toBe(true);
    expect(sameAction({ tool: 't', params: { a: 1 } }, { tool: 't', params: { a: 2 } })).toBe(false);
  });

  it('compares flat params as their canonical JSON does, without building it', () => {
    // values that are equal or not under JSON in ways === does not see (-0, NaN, nested values, undefined)
    const VALUES: unknown[] = ['a', 'b', '', '0', 0, -0, 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, true, false, null, undefined, [1], { x: 1 }];
    const KEYS = ['path', 'content', 'x', 'y'];
    const rng = new Rng(3);
    const randomParams = (): Record<string, unknown> => {
      const params: Record<string, unknown> = {};
      for (const k of rng.shuffle(KEYS)) if (rng.next() < 0.6) params[k] = rng.pick(VALUES);
      return params;
    };
    let decided = 0;
    let equal = 0;
    for (let i = 0; i < 20_000; i++) {
      const a = randomParams();
      // half the pairs start as a reordered copy, so equal pairs are common
      const b = rng.next() < 0.5 ? Object.fromEntries(rng.shuffle(Object.entries(a))) : randomParams();
      if (rng.next() < 0.3) b[rng.pick(KEYS)] = rng.pick(VALUES);
      const flat = sameFlatParams(a, b);
      const canonical = safeCanonicalJson(a) === safeCanonicalJson(b);
      if (flat === undefined) continue;
      decided++;
      if (canonical) equal++;
      expect(flat, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(canonical);
      expect(sameAction({ tool: 't', params: a }, { tool: 't', params: b })).toBe(canonical);
    }
    expect(decided).toBeGreaterThan(5_000);
    expect(equal).toBeGreaterThan(1_000);
    // inherited members are not the object's own (JSON leaves them out)
    const inherited = Object.create({ x: 1 }) as Record<string, unknown>;
    expect(sameFlatParams(inherited, {})).toBe(true);
    inherited['y'] = 1;
    expect(sameFlatParams({ x: 1 }, inherited)).toBe(false);
    expect(sameFlatParams({ x: 0 }, { x: -0 })).toBe(true);
    expect(sameFlatParams({ x: 1, y: undefined }, { x: 1 })).toBe(true);
    expect(sameFlatParams({ x: Number.NaN }, { x: null })).toBeUndefined();
  });

  it('interns strings to stable ids', () => {
    const i = new Interner();
    expect(i.id('a')).toBe(1);
    expect(i.id('b')).toBe(2);
    expect(i.id('a')).toBe(1);
    expect(i.size).toBe(2);
  });
});

describe('HashTable64', () => {
  it('stores, finds and grows without losing entries', () => {
    const t = new HashTable64(4);
    const n = 50_000;
    for (let k = 0; k < n; k++) {
      const slot = t.upsert(k * 7919, k ^ 0x5555);
      expect(t.inserted).toBe(true);
      t.setValue(slot, k);
      t.setAux(slot, -k);
    }
    expect(t.size).toBe(n);
    for (let k = 0; k < n; k += 97) {
      const slot = t.find(k * 7919, k ^ 0x5555);
      expect(t.value(slot)).toBe(k);
      expect(t.aux(slot) + k).toBe(0);
    }
    expect(t.find(-1, -1)).toBe(-1);
    t.upsert(0, 0);
    expect(t.find(0, 0)).toBeGreaterThanOrEqual(0);
    t.reset(10);
    expect(t.size).toBe(0);
    expect(t.find(7919, 1 ^ 0x5555)).toBe(-1);
  });
});
