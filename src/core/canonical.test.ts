import { describe, expect, it } from 'vitest';
import { canonicalJson, contentRef, sha256Ref } from './canonical.js';

describe('canonical JSON', () => {
  it('sorts keys at every depth and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[{"y":2,"z":1}]},"b":1}');
    expect(contentRef({ x: 1, y: 2 })).toBe(contentRef({ y: 2, x: 1 }));
  });

  it('hashes to sha256 refs and refuses non-finite numbers', () => {
    expect(sha256Ref('')).toBe('sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(() => canonicalJson({ x: Number.NaN })).toThrow(/non-finite/);
  });
});
