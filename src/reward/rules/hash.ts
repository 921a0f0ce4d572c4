import { canonicalJson } from '../../core/canonical.js';

/**
 * Hashing and tables for the rule layer's per-trajectory indexes (actions seen, file contents, tokens).
 * Every step costs one pass over its own characters and O(1) table work, so scoring stays linear in
 * trajectory size.
 *
 * - Short strings are hashed in JavaScript (two independent 32-bit lanes, FNV-1a and a second odd
 *   multiplier, finished with murmur3's fmix32) — no allocation.
 * - Long strings (file contents, long commands) are *interned*: an {@link Interner} maps each distinct
 *   string to a small integer through a `Map`, whose native hashing is several times faster per character
 *   than a JavaScript loop, and whose equality is exact.
 *
 * Where a hash match would *penalise* a step (redundancy), the rule confirms it by exact comparison;
 * where it would only credit one (information use), a 64-bit collision (probability ~n²/2⁶⁵, under 10⁻⁹
 * for 10⁵ distinct tokens) is accepted.
 */

const P1 = 0x01000193;
const P2 = 0x5bd1e995;

/** murmur3's 32-bit finaliser: spreads every input bit over the output. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/**
 * Distinct strings → small integers, in order of first appearance. Equal strings get equal ids; ids are
 * exact (no collisions). One interner serves all rules of a trajectory.
 */
export class Interner {
  private readonly ids = new Map<string, number>();

  /** The id of `s`, assigning the next one on first sight. */
  id(s: string): number {
    const ids = this.ids;
    let id = ids.get(s);
    if (id === undefined) {
      id = ids.size + 1;
      ids.set(s, id);
    }
    return id;
  }

  /** Number of distinct strings seen. */
  get size(): number {
    return this.ids.size;
  }
}

/** Strings longer than this are interned rather than hashed character by character. */
export const INTERN_MIN_LENGTH = 32;

/**
 * A running two-lane hash. Feed it with `str`/`int`, read `h1`/`h2` after `finish()`. One instance is
 * reused for many values (reset with `start`), so hashing allocates nothing.
 */
export class Hasher {
  /** First lane (FNV-1a). */
  h1 = 0;
  /** Second lane. */
  h2 = 0;

  /** Starts a new hash; different seeds give unrelated hash families (file slots vs. actions, …). */
  start(seed: number): this {
    this.h1 = (0x811c9dc5 ^ seed) | 0;
    this.h2 = (0x27d4eb2f ^ Math.imul(seed, 0x9e3779b1)) | 0;
    return this;
  }

  /** Feeds every UTF-16 code unit of `s`, then its length (so `"ab","c"` ≠ `"a","bc"`). */
  str(s: string): this {
    let h1 = this.h1;
    let h2 = this.h2;
    const n = s.length;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, P1);
      h2 = Math.imul(h2 ^ c, P2);
    }
    this.h1 = Math.imul(h1 ^ n, P1);
    this.h2 = Math.imul(h2 ^ (n + 0x3f), P2);
    return this;
  }

  /** Feeds one 32-bit integer (a tag, a count, an id). */
  int(x: number): this {
    this.h1 = Math.imul(this.h1 ^ x, P1);
    this.h2 = Math.imul(this.h2 ^ fmix32(x), P2);
    return this;
  }

  /** Finishes the hash: `h1`/`h2` hold well-mixed lanes afterwards. */
  finish(): this {
    this.h1 = fmix32(this.h1);
    this.h2 = fmix32(this.h2 ^ 0x6a09e667);
    return this;
  }
}

const TAG_STRING = 1;
const TAG_NUMBER = 2;
const TAG_TRUE = 3;
const TAG_FALSE = 4;
const TAG_NULL = 5;
const TAG_ARRAY = 6;
const TAG_OTHER = 7;
const TAG_INTERNED = 8;
const TAG_INT = 9;
const TAG_KEY = 10;

function feedValue(h: Hasher, v: unknown, interner: Interner): void {
  switch (typeof v) {
    case 'string':
      if (v.length > INTERN_MIN_LENGTH) h.int(TAG_INTERNED).int(interner.id(v));
      else h.int(TAG_STRING).str(v);
      return;
    case 'number':
      // Integers (the common case: line numbers, ids) without a string conversion; -0 is 0, as in JSON.
      if ((v | 0) === v) h.int(TAG_INT).int(v);
      else h.int(TAG_NUMBER).str(String(v));
      return;
    case 'boolean':
      h.int(v ? TAG_TRUE : TAG_FALSE);
      return;
    default:
      if (v === null) {
        h.int(TAG_NULL);
      } else if (Array.isArray(v)) {
        h.int(TAG_ARRAY).int(v.length);
        for (const x of v) feedValue(h, x, interner);
      } else if (typeof v === 'object') {
        // Nested objects are rare in tool params; their canonical JSON fixes the key order.
        h.int(TAG_OTHER).int(interner.id(safeCanonicalJson(v)));
      } else {
        h.int(TAG_NULL);
      }
  }
}

const SEED_MEMBER = 0x3e3be5;

/**
 * Hash of a tool call: the tool name and its params, ignoring key order and `undefined` members — the same
 * equivalence as comparing `canonicalJson` of the params, without building it. Long strings enter through
 * `interner`. The result is left in `out.h1`/`out.h2`.
 *
 * Key order is made irrelevant by hashing each `key: value` member on its own and *adding* the member
 * hashes (per lane, mod 2³²), an order-independent combination: nothing is sorted and no keys are compared
 * (string `<` is a runtime call in V8), and the keys are enumerated once. Objects cannot repeat a key, so
 * the sum of distinct well-mixed member hashes is as collision-resistant as an ordered hash; a match is
 * confirmed exactly by the caller anyway ({@link sameAction}).
 */
export function hashParams(out: Hasher, seed: number, tool: string, params: Record<string, unknown>, interner: Interner): void {
  let s1 = 0;
  let s2 = 0;
  let members = 0;
  for (const key in params) {
    const v = params[key];
    if (v === undefined) continue;
    out.start(SEED_MEMBER).int(TAG_KEY).str(key);
    feedValue(out, v, interner);
    out.finish();
    s1 = (s1 + out.h1) | 0;
    s2 = (s2 + out.h2) | 0;
    members++;
  }
  out.start(seed).str(tool).int(members).int(s1).int(s2).finish();
}

/**
 * `canonicalJson`, except that a value JSON cannot represent (a non-finite number in an in-memory
 * trajectory) yields `JSON.stringify`'s rendering instead of an error: the rules must not throw on odd
 * params.
 */
export function safeCanonicalJson(value: unknown): string {
  try {
    return canonicalJson(value);
  } catch {
    return JSON.stringify(value) ?? '';
  }
}

/** Exact equality of two actions under the canonical-JSON equivalence (used to confirm a hash match). */
export function sameAction(a: { tool: string; params: Record<string, unknown> }, b: { tool: string; params: Record<string, unknown> }): boolean {
  if (a === b) return true;
  if (a.tool !== b.tool) return false;
  return sameFlatParams(a.params, b.params) ?? safeCanonicalJson(a.params) === safeCanonicalJson(b.params);
}

/** Defined members of a params object whose values are all JSON scalars (string, finite number, boolean, null), else -1. */
function flatMembers(params: Record<string, unknown>): number {
  let n = 0;
  for (const key in params) {
    if (!Object.prototype.hasOwnProperty.call(params, key)) continue;
    const v = params[key];
    if (v === undefined) continue;
    if (typeof v === 'string' || typeof v === 'boolean' || v === null || (typeof v === 'number' && Number.isFinite(v))) n++;
    else return -1;
  }
  return n;
}

/**
 * Whether two params objects have equal canonical JSON, decided without building it when both are flat
 * (every defined value a string, a finite number, a boolean or null: most tool calls): then they are equal
 * when they have the same defined members with `===` values. `undefined` when either is not flat.
 */
export function sameFlatParams(a: Record<string, unknown>, b: Record<string, unknown>): boolean | undefined {
  const members = flatMembers(a);
  if (members < 0) return undefined;
  const other = flatMembers(b);
  if (other < 0) return undefined;
  if (members !== other) return false;
  for (const key in a) {
    if (!Object.prototype.hasOwnProperty.call(a, key)) continue;
    const v = a[key];
    if (v !== undefined && (!Object.prototype.hasOwnProperty.call(b, key) || b[key] !== v)) return false;
  }
  return true;
}

/**
 * An open-addressing (linear probing) hash table from 64-bit keys (two int32 lanes) to two int32 values,
 * `value` and `aux`. Entries live in one `Int32Array` (key, key, value, aux), so a probe touches one cache
 * line and an entry costs no allocation; the table grows at half load, so inserts are amortised O(1).
 * The all-zero key marks an empty slot, so the key (0, 0) is stored as (0, 1) — a 2⁻⁶⁴ aliasing.
 *
 * Slot numbers returned by {@link find}/{@link upsert} are valid until the next insertion.
 */
export class HashTable64 {
  private data: Int32Array;
  private mask: number;
  /** Number of keys stored. */
  size = 0;
  /** Whether the last {@link upsert} created the key (its values are then 0). */
  inserted = false;

  /** @param expected Keys expected; the table grows as needed, so a low guess only costs rehashes. */
  constructor(expected = 16) {
    const cap = HashTable64.capacityFor(expected);
    this.data = new Int32Array(cap * 4);
    this.mask = cap - 1;
  }

  private static capacityFor(expected: number): number {
    let cap = 16;
    while (cap < expected * 2) cap *= 2;
    return cap;
  }

  /**
   * Empties the table for reuse, sized for `expected` keys. The backing array is kept when it is no more
   * than 8 times the size needed (clearing it then costs O(expected)), so a table reused across trajectories
   * allocates nothing in the steady state.
   */
  reset(expected: number): void {
    const cap = HashTable64.capacityFor(expected);
    if (this.mask + 1 >= cap && this.mask + 1 <= cap * 8) {
      this.data.fill(0);
    } else {
      this.data = new Int32Array(cap * 4);
      this.mask = cap - 1;
    }
    this.size = 0;
    this.inserted = false;
  }

  /** Slot of the key, or -1 when absent. */
  find(h1: number, h2: number): number {
    if (h1 === 0 && h2 === 0) h2 = 1;
    const d = this.data;
    const mask = this.mask;
    let i = Math.imul(h1 ^ Math.imul(h2, 0x27d4eb2f), 0x9e3779b1) & mask;
    for (;;) {
      const o = i << 2;
      const a = d[o] as number;
      const b = d[o + 1] as number;
      if (a === h1 && b === h2) return i;
      if (a === 0 && b === 0) return -1;
      i = (i + 1) & mask;
    }
  }

  /** Slot of the key, inserting it (with both values 0, and `inserted` set) when absent. */
  upsert(h1: number, h2: number): number {
    if (h1 === 0 && h2 === 0) h2 = 1;
    const d = this.data;
    const mask = this.mask;
    let i = Math.imul(h1 ^ Math.imul(h2, 0x27d4eb2f), 0x9e3779b1) & mask;
    for (;;) {
      const o = i << 2;
      const a = d[o] as number;
      const b = d[o + 1] as number;
      if (a === h1 && b === h2) {
        this.inserted = false;
        return i;
      }
      if (a === 0 && b === 0) break;
      i = (i + 1) & mask;
    }
    if ((this.size + 1) * 2 > mask + 1) {
      this.grow();
      return this.upsert(h1, h2);
    }
    const o = i << 2;
    d[o] = h1;
    d[o + 1] = h2;
    this.size++;
    this.inserted = true;
    return i;
  }

  /** The first value of a slot. */
  value(slot: number): number {
    return this.data[(slot << 2) + 2] as number;
  }

  /** Sets the first value of a slot. */
  setValue(slot: number, v: number): void {
    this.data[(slot << 2) + 2] = v;
  }

  /** The second value of a slot. */
  aux(slot: number): number {
    return this.data[(slot << 2) + 3] as number;
  }

  /** Sets the second value of a slot. */
  setAux(slot: number, v: number): void {
    this.data[(slot << 2) + 3] = v;
  }

  private grow(): void {
    const old = this.data;
    const cap = (this.mask + 1) * 2;
    const d = new Int32Array(cap * 4);
    const mask = cap - 1;
    for (let o = 0; o < old.length; o += 4) {
      const a = old[o] as number;
      const b = old[o + 1] as number;
      if (a === 0 && b === 0) continue;
      let i = Math.imul(a ^ Math.imul(b, 0x27d4eb2f), 0x9e3779b1) & mask;
      while (d[i << 2] !== 0 || d[(i << 2) + 1] !== 0) i = (i + 1) & mask;
      const p = i << 2;
      d[p] = a;
      d[p + 1] = b;
      d[p + 2] = old[o + 2] as number;
      d[p + 3] = old[o + 3] as number;
    }
    this.data = d;
    this.mask = mask;
  }
}
