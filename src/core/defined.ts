/**
 * `defined()`: an object literal without its `undefined`-valued keys, typed for `exactOptionalPropertyTypes`.
 * Pure and deterministic (workflows use it too).
 */

/** The keys of `T` whose value may be `undefined`. */
type MaybeUndefinedKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/**
 * `T` with every key whose value may be `undefined` made optional (`k?: V`, without `| undefined`), which is
 * what `exactOptionalPropertyTypes` wants for a field that may be left out.
 */
export type Defined<T> = Flatten<
  { [K in keyof T as K extends MaybeUndefinedKeys<T> ? never : K]: T[K] } & {
    [K in keyof T as K extends MaybeUndefinedKeys<T> ? K : never]?: Exclude<T[K], undefined>;
  }
>;

/** One object type instead of an intersection, so editors and error messages show the fields. */
type Flatten<T> = { [K in keyof T]: T[K] };

/**
 * Returns `fields` without the keys whose value is `undefined` (a new object; `null`, `0`, `''` and `false`
 * stay). It replaces `...(x === undefined ? {} : { x })` spreads: an optional field is left out rather than
 * set to `undefined`, which `exactOptionalPropertyTypes` (and zod's `.strict()`, and JSON) tell apart.
 *
 * @example
 * ```ts
 * const opts = { env, ...defined({ maxSteps: cfg.max_steps, name }) };
 * // typeof opts: { env: string } & { maxSteps?: number; name?: string }
 * ```
 */
export function defined<T extends object>(fields: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as Defined<T>;
}
