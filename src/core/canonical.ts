import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted at every depth, no whitespace, `undefined` members dropped (as
 * `JSON.stringify` does). Two values that mean the same thing serialise to the same bytes, so their
 * sha256 is a content address.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/**
 * A copy of `value` with the keys of every object in sorted order and `undefined` members left out, which
 * `JSON.stringify` then writes as canonical JSON.
 *
 * @throws TypeError on a non-finite number.
 */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    // JSON has no NaN/Infinity; refusing here beats silently hashing `null`.
    throw new TypeError(`canonicalJson: non-finite number ${value} cannot be represented in JSON`);
  }
  return value;
}

/** `sha256:<hex>` of a string or bytes. */
export function sha256Ref(data: string | Uint8Array): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** `sha256:<hex>` of the canonical JSON of a value. */
export function contentRef(value: unknown): string {
  return sha256Ref(canonicalJson(value));
}
