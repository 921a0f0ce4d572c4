import path from 'node:path';
import { StoreError } from '../errors.js';

/**
 * Where things live under a store root (see docs/store.md):
 *
 * ```
 * <root>/objects/ab/cdef…        content, named by the sha256 of its bytes (read-only files)
 * <root>/index/ab/cdef….json     one small JSON entry per artifact: kind, size, created, parents, name
 * <root>/refs/<name>             a named root: the text `sha256:…\n`
 * <root>/tmp/                    temp files of in-flight writes
 * ```
 */

/** `sha256:` followed by 64 lower-case hex digits. */
export const REF_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** Ref names: path-like segments of letters, digits, `.`, `_`, `-`; no segment starts with `.`. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/** Default store root, relative to the working directory. */
export const DEFAULT_STORE_ROOT = '.gymflow/store';

/** Environment variable that overrides the default store root. */
export const STORE_ENV_VAR = 'GYMFLOW_STORE';

/** Whether a store root names a bucket (`s3://bucket/prefix`, the S3 backend) rather than a directory. */
export function isS3Url(root: string): boolean {
  return root.startsWith('s3://');
}

/** Whether `value` is a full content ref. */
export function isRef(value: string): boolean {
  return REF_PATTERN.test(value);
}

/** Throws a {@link StoreError} naming `what` unless `value` is a full content ref. */
export function assertRef(value: string, what = 'ref'): string {
  if (!isRef(value)) throw new StoreError(`${what} '${value}' is not a content ref (expected sha256:<64 hex digits>)`);
  return value;
}

/** Throws a {@link StoreError} unless `name` is a valid ref name. */
export function assertName(name: string): string {
  if (name.length > 200 || !NAME_PATTERN.test(name)) {
    throw new StoreError(
      `invalid ref name '${name}': use letters, digits, '.', '_', '-' in '/'-separated segments that do not start with '.' (at most 200 characters)`,
    );
  }
  return name;
}

function hexOf(ref: string): string {
  return assertRef(ref).slice('sha256:'.length);
}

/** `<root>/objects/ab/cdef…` for a ref. */
export function objectPath(root: string, ref: string): string {
  const hex = hexOf(ref);
  return path.join(root, 'objects', hex.slice(0, 2), hex.slice(2));
}

/** `<root>/index/ab/cdef….json` for a ref. */
export function indexPath(root: string, ref: string): string {
  const hex = hexOf(ref);
  return path.join(root, 'index', hex.slice(0, 2), `${hex.slice(2)}.json`);
}

/** `<root>/refs/<name>`. */
export function refPath(root: string, name: string): string {
  return path.join(root, 'refs', ...assertName(name).split('/'));
}

/** The ref of an object file named `shard/rest` (or `undefined` for a stray file). */
export function refFromShard(shard: string, rest: string): string | undefined {
  const ref = `sha256:${shard}${rest.replace(/\.json$/, '')}`;
  return isRef(ref) ? ref : undefined;
}

/**
 * The store root to use: the explicit option, else `$GYMFLOW_STORE`, else `.gymflow/store`, resolved
 * against the working directory; an `s3://bucket/prefix` URL is returned as it is.
 */
export function resolveStoreRoot(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit ?? (env[STORE_ENV_VAR] || undefined) ?? DEFAULT_STORE_ROOT;
  return isS3Url(chosen) ? chosen : path.resolve(chosen);
}

/** `sha256:0123abcd…` shortened for tables. */
export function shortRef(ref: string, hexDigits = 12): string {
  return ref.startsWith('sha256:') ? `sha256:${ref.slice(7, 7 + hexDigits)}` : ref;
}
