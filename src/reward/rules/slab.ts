/**
 * Typed arrays for the reward layers' per-trajectory results (rule columns, the combination's weights), cut
 * one after another from a shared slab.
 *
 * Creating an ArrayBuffer costs far more than a view on one: ~350 ns for a few bytes, ~650 for a few
 * hundred, ~1 µs for a few kilobytes, against ~25 ns for a view, and each buffer adds to the garbage
 * collector's external memory. A trajectory's rules need half a dozen arrays (a column is four), which on
 * a 5-step trajectory cost more than the scoring itself. So arrays of up to {@link SLAB_MAX_ARRAY_BYTES}
 * are views on a 64 KiB slab that is filled in order and never reused: a new slab starts when one is full,
 * and a slab lives as long as any array cut from it. Larger arrays get a buffer of their own, whose cost is
 * small next to the steps they hold.
 */

const SLAB_BYTES = 64 * 1024;
/** The largest array cut from a slab; larger ones get their own buffer. */
export const SLAB_MAX_ARRAY_BYTES = SLAB_BYTES / 4;

let slab = new ArrayBuffer(SLAB_BYTES);
let used = 0;

interface TypedArrayType<T> {
  readonly BYTES_PER_ELEMENT: number;
  new (buffer: ArrayBuffer, byteOffset: number, length: number): T;
  new (length: number): T;
}

/** A zeroed typed array of `length` elements (see the module documentation). */
export function slabArray<T>(type: TypedArrayType<T>, length: number): T {
  const bytes = (length * type.BYTES_PER_ELEMENT + 7) & ~7;
  if (bytes > SLAB_MAX_ARRAY_BYTES) return new type(length);
  if (used + bytes > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    used = 0;
  }
  const at = used;
  used += bytes;
  return new type(slab, at, length);
}
