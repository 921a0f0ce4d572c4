import { describe, expect, expectTypeOf, it } from 'vitest';
import { defined } from './defined.js';

describe('defined', () => {
  it('drops the keys whose value is undefined and keeps every other value', () => {
    const out = defined({ a: 1, b: undefined, c: null, d: 0, e: '', f: false });
    expect(out).toEqual({ a: 1, c: null, d: 0, e: '', f: false });
    expect(Object.keys(out)).toEqual(['a', 'c', 'd', 'e', 'f']);
    expect('b' in out).toBe(false);
  });

  it('returns a new object and leaves its argument alone', () => {
    const fields = { a: 1, b: undefined as number | undefined };
    const out = defined(fields);
    expect(out).not.toBe(fields);
    expect(Object.keys(fields)).toEqual(['a', 'b']);
  });

  it('types maybe-undefined keys as optional without `| undefined`', () => {
    const maybe = (): number | undefined => undefined;
    const out = defined({ a: 'x', b: maybe() });
    expectTypeOf(out.a).toEqualTypeOf<string>();
    // Under exactOptionalPropertyTypes the result fits a type whose `b` is optional but not `| undefined`.
    const target: { a: string; b?: number } = out;
    expect(target).toEqual({ a: 'x' });
    // @ts-expect-error `a` is required and never undefined.
    const bad: { a?: number } = defined({ a: 'x' });
    expect(bad).toEqual({ a: 'x' });
  });
});
