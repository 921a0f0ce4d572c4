/**
 * The fuzz harness (issue 50): a target is a named fast-check property over one parser of untrusted input.
 * The same targets run in CI (`tests/fuzz/*.test.ts`, a few thousand cases each) and in the soak script
 * (`bench/fuzz.ts`, 100,000 or more per target), which prints a counterexample's seed and path so that
 * `fc.assert(property, { seed, path })` replays it.
 *
 * The properties every target checks: the parser never throws anything but its module's typed error, the
 * error names the input's place (file, line, JSON path), no case takes longer than {@link CASE_LIMIT_MS}, and
 * for the paths that write, nothing already stored changes.
 */
import fc from 'fast-check';
import { GymflowError } from '../../src/core/errors.js';

/** A fuzz target: one property, with how many of CI's cases it gets relative to the default. */
export interface FuzzTarget {
  /** `recorder/convert-bytes`, `pipeline-config/object`, … (the soak script's `--target` matches a prefix). */
  name: string;
  /** Builds the property; called once per run (a property may hold a temporary directory, see `cleanup`). */
  property: () => fc.IRawProperty<unknown>;
  /**
   * The share of {@link ciRuns} this target runs in CI (default 1): file-writing targets cost milliseconds a
   * case and run fewer there. The soak script runs every target its full `--runs`.
   */
  ciShare?: number;
  /** Removes what `property` made (temporary directories, servers). */
  cleanup?: () => Promise<void>;
  /** Prepares what `property` needs (a server); called before `property`. */
  setup?: () => Promise<void>;
}

/** Cases per target in CI: `$GYMFLOW_FUZZ_RUNS`, default 2000. */
export function ciRuns(target: Pick<FuzzTarget, 'ciShare'>): number {
  const base = Number(process.env.GYMFLOW_FUZZ_RUNS ?? 2000);
  if (!Number.isInteger(base) || base < 1) throw new Error(`GYMFLOW_FUZZ_RUNS must be a positive integer, got ${process.env.GYMFLOW_FUZZ_RUNS}`);
  return Math.max(1, Math.round(base * (target.ciShare ?? 1)));
}

/**
 * A time bound for one case: a hang is a failure. Generous (a loaded 2-core machine), since a bug that makes
 * a parser quadratic or loop shows as seconds, not milliseconds. Async cases are cut off at it; a synchronous
 * case cannot be interrupted in-process, so it is measured and failed afterwards (an endless loop is caught by
 * vitest's test timeout, and by the soak script's `--case-timeout` watchdog).
 */
export const CASE_LIMIT_MS = Number(process.env.GYMFLOW_FUZZ_CASE_MS ?? 5000);

/** Runs `fn` and fails when it took longer than {@link CASE_LIMIT_MS}. */
export function timed<T>(what: string, fn: () => T): T {
  const start = performance.now();
  const out = fn();
  const ms = performance.now() - start;
  if (ms > CASE_LIMIT_MS) throw new Error(`${what} took ${ms.toFixed(0)} ms (limit ${CASE_LIMIT_MS} ms): a hang or a super-linear parser`);
  return out;
}

/** Awaits `p`, failing when it takes longer than {@link CASE_LIMIT_MS}. */
export async function timedAsync<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${CASE_LIMIT_MS} ms: a hang`)), CASE_LIMIT_MS);
  });
  try {
    return await Promise.race([p, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Calls `fn` and returns what it threw, or undefined. Fails the case when it threw anything but a
 * `GymflowError` of the classes given, or an error whose message does not contain `place`.
 */
export function expectTypedFailure(what: string, fn: () => unknown, classes: readonly (abstract new (...args: never[]) => GymflowError)[], place: string): GymflowError | undefined {
  try {
    timed(what, fn);
    return undefined;
  } catch (err) {
    return checkTyped(what, err, classes, place);
  }
}

/** {@link expectTypedFailure} for an async call. */
export async function expectTypedFailureAsync(what: string, fn: () => Promise<unknown>, classes: readonly (abstract new (...args: never[]) => GymflowError)[], place: string): Promise<GymflowError | undefined> {
  try {
    await timedAsync(what, fn());
    return undefined;
  } catch (err) {
    return checkTyped(what, err, classes, place);
  }
}

function checkTyped(what: string, err: unknown, classes: readonly (abstract new (...args: never[]) => GymflowError)[], place: string): GymflowError {
  if (!(err instanceof GymflowError) || !classes.some((c) => err instanceof c)) {
    const e = err as Error;
    throw new Error(`${what} threw ${e?.constructor?.name ?? typeof err} instead of ${classes.map((c) => c.name).join(' | ')}: ${e?.stack ?? String(err)}`);
  }
  if (!err.message.includes(place)) throw new Error(`${what} threw ${err.name} whose message does not name the input ${JSON.stringify(place)}: ${err.message}`);
  return err;
}

/** Any JSON value, with keys that parsers look for mixed in among random ones so that deep paths get reached. */
export function jsonValue(keys: readonly string[] = [], maxDepth = 4): fc.Arbitrary<unknown> {
  const key = keys.length > 0 ? fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 8 })) : fc.string({ maxLength: 8 });
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', maxDepth, withCrossShrink: true },
      fc.constant(null),
      fc.boolean(),
      fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1, 1e308, Number.MAX_SAFE_INTEGER + 2)),
      fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom(...keys, '', '$', '{', '<tool_call>')),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 5 }),
    ),
  }));
  return value;
}

/** A path into a JSON value (`['steps', 3, 'action']`), for {@link mutateAt}. */
export type JsonPathKeys = (string | number)[];

/** Every path of a JSON value, containers first (the root is `[]`). */
export function pathsOf(value: unknown, limit = 5000): JsonPathKeys[] {
  const out: JsonPathKeys[] = [];
  const walk = (v: unknown, p: JsonPathKeys): void => {
    if (out.length >= limit) return;
    out.push(p);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...p, i]));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...p, k]);
  };
  walk(value, []);
  return out;
}

/** One structural change to a JSON value: replace a subtree, delete a key or element, or duplicate an element. */
export type JsonMutation = { kind: 'replace'; at: number; value: unknown } | { kind: 'delete'; at: number } | { kind: 'duplicate'; at: number };

/** Mutations of a JSON value; `at` picks a path of {@link pathsOf} (modulo their number). */
export function jsonMutations(keys: readonly string[] = []): fc.Arbitrary<JsonMutation[]> {
  const at = fc.nat();
  return fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant('replace' as const), at, value: jsonValue(keys, 3) }),
      fc.record({ kind: fc.constant('delete' as const), at }),
      fc.record({ kind: fc.constant('duplicate' as const), at }),
    ),
    { minLength: 1, maxLength: 4 },
  );
}

/** Applies mutations to a deep copy of `value`. */
export function mutateJson(value: unknown, mutations: readonly JsonMutation[]): unknown {
  let root = structuredClone(value);
  for (const m of mutations) {
    const paths = pathsOf(root);
    const path = paths[m.at % paths.length] as JsonPathKeys;
    if (path.length === 0) {
      if (m.kind === 'replace') root = structuredClone(m.value);
      continue;
    }
    let parent = root as Record<string | number, unknown>;
    for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
    const last = path.at(-1) as string | number;
    if (m.kind === 'replace') parent[last] = structuredClone(m.value);
    else if (m.kind === 'delete') {
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete parent[last];
    } else if (Array.isArray(parent)) parent.splice(last as number, 0, structuredClone(parent[last as number]));
    else parent[`${String(last)}_copy`] = structuredClone(parent[last]);
  }
  return root;
}

/** One change to a file's bytes: flip, insert, delete a range, truncate, or duplicate/drop a line. */
export type ByteMutation =
  | { kind: 'flip'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'dropLine'; at: number }
  | { kind: 'duplicateLine'; at: number };

/** Byte mutations; positions are taken modulo the file's length. */
export function byteMutations(): fc.Arbitrary<ByteMutation[]> {
  const at = fc.nat();
  return fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at, byte: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('insert' as const), at, bytes: fc.oneof(fc.uint8Array({ maxLength: 16 }), fc.constantFrom(...['{', '}', '"', '\n', '[', ']', ',', ':', '\\u', 'null', '\uFEFF', '\r\n', '- ', '&a', '*a', '!!binary'].map((s) => new TextEncoder().encode(s)))) }),
      fc.record({ kind: fc.constant('delete' as const), at, length: fc.integer({ min: 1, max: 64 }) }),
      fc.record({ kind: fc.constant('truncate' as const), at }),
      fc.record({ kind: fc.constant('dropLine' as const), at }),
      fc.record({ kind: fc.constant('duplicateLine' as const), at }),
    ),
    { minLength: 1, maxLength: 5 },
  );
}

/** Applies byte mutations to a copy of `bytes`. */
export function mutateBytes(bytes: Uint8Array, mutations: readonly ByteMutation[]): Buffer {
  let b = Buffer.from(bytes);
  for (const m of mutations) {
    const at = b.length === 0 ? 0 : m.at % b.length;
    switch (m.kind) {
      case 'flip':
        if (b.length > 0) b[at] = m.byte;
        break;
      case 'insert':
        b = Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at)]);
        break;
      case 'delete':
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + m.length)]);
        break;
      case 'truncate':
        b = b.subarray(0, at);
        break;
      case 'dropLine':
      case 'duplicateLine': {
        const lines = b.toString('latin1').split('\n');
        const i = m.at % lines.length;
        if (m.kind === 'dropLine') lines.splice(i, 1);
        else lines.splice(i, 0, lines[i] as string);
        b = Buffer.from(lines.join('\n'), 'latin1');
        break;
      }
    }
  }
  return b;
}
