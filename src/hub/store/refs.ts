import { createHash } from 'node:crypto';
import { readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { OutputExistsError } from '../../core/errors.js';
import { ensureDir, fsyncDir, isErrno, processAlive } from '../../core/fs.js';
import { RefConflictError, StoreError } from '../errors.js';
import { writeFileAtomic } from './atomic.js';
import { readIndexEntry } from './index-entry.js';
import { assertName, assertRef, refPath, shortRef } from './layout.js';

/**
 * Refs of the artifact store (docs/store.md): named roots, `refs/<name>` holding the text `sha256:…\n`.
 * `gc` keeps what they reach. A ref is published last (after its object and index entry), so a reader that
 * finds a ref finds its artifact.
 */

/** A ref file that holds no ref (edited by hand, cut short): its name, file and why ({@link scanRefs}). */
export interface BadRef {
  name: string;
  path: string;
  message: string;
}

/**
 * Throws a {@link StoreError} unless `name` can name an artifact in the store at `root`: a valid name that is
 * not a folder of other names (`runs` while `runs/expert` exists) and has no name as a folder
 * (`runs/expert/x` while `runs/expert` exists).
 */
export async function checkRefName(root: string, name: string): Promise<void> {
  assertName(name);
  const segments = name.split('/');
  for (let i = 1; i <= segments.length; i++) {
    const prefix = segments.slice(0, i).join('/');
    const info = await stat(refPath(root, prefix)).catch(() => undefined);
    if (info === undefined) return;
    if (i < segments.length && !info.isDirectory()) throw new StoreError(`cannot name '${name}': '${prefix}' is already a name in store ${root}, so it cannot hold others`);
    if (i === segments.length && info.isDirectory()) throw new StoreError(`cannot name '${name}': it is a folder of names in store ${root} (${name}/…); choose another name`);
  }
}

/**
 * {@link checkRefName}, also refusing a name that already names an artifact unless `force`.
 *
 * @throws OutputExistsError naming `name`, the ref it names and `--force`.
 */
export async function checkNewRefName(root: string, name: string, options: { force?: boolean } = {}): Promise<void> {
  await checkRefName(root, name);
  if (options.force) return;
  const info = await stat(refPath(root, name)).catch(() => undefined);
  if (info === undefined) return;
  const ref = await readRef(root, name).catch(() => undefined);
  throw new OutputExistsError(`'${name}' already names ${ref === undefined ? 'an artifact' : shortRef(ref)} in store ${root} (pass --force to move the name, or choose another name)`);
}

/**
 * Points `refs/<name>` at an artifact of the store at `root` (atomically replacing an earlier target), as a
 * conditional write: under the name's lock file, the target is read and must be `expect` when given (`null`: no
 * target); the name already naming `ref` is fine (a retry). Another writer holding the lock — two updates of one
 * name at once — makes this one fail with a {@link RefConflictError} rather than overwrite the other's.
 */
export async function writeRef(root: string, name: string, ref: string, expect?: string | null): Promise<void> {
  await checkRefName(root, name);
  assertRef(ref);
  if ((await readIndexEntry(root, ref)) === undefined) throw new StoreError(`cannot name '${name}': artifact ${ref} is not in store ${root}`);
  const dest = refPath(root, name);
  await ensureDir(path.dirname(dest));
  await withRefLock(root, name, async () => {
    const current = await readRef(root, name).catch(() => undefined);
    if (expect !== undefined && (current ?? null) !== expect && current !== ref) throw refConflict(root, name, expect, current);
    if (current === ref) return;
    await writeFileAtomic(root, dest, `${ref}\n`, 0o644);
  });
}

/** The error of a ref update that found `actual` where it expected `expected` (`null`: nothing). */
export function refConflict(store: string, name: string, expected: string | null | undefined, actual: string | undefined, why?: string): RefConflictError {
  const want = expected === undefined ? 'the target it read' : expected === null ? 'no target' : shortRef(expected);
  const now = actual === undefined ? 'no target' : shortRef(actual);
  return new RefConflictError(
    `conflict on ref '${name}' in store ${store}: ${why ?? `expected ${want}, it names ${now}`}; another writer updated it, nothing was overwritten (re-read the name and retry, or choose another name)`,
    name,
    expected,
    actual,
  );
}

/** Locks of ref updates: `<root>/locks/<sha256 of the name>.lock`, holding `<host>.<pid>`. */
const LOCKS_DIR = 'locks';
/** A lock older than this is a dead writer's (a ref update takes milliseconds). */
const STALE_LOCK_MS = 30_000;
const HOST = hostname();

async function withRefLock<T>(root: string, name: string, fn: () => Promise<T>): Promise<T> {
  const dir = path.join(root, LOCKS_DIR);
  await ensureDir(dir);
  const lock = path.join(dir, `${createHash('sha256').update(name).digest('hex')}.lock`);
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(lock, `${HOST}.${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if (!isErrno(err, 'EEXIST') || attempt > 0 || !(await staleLock(lock))) {
        if (isErrno(err, 'EEXIST')) throw refConflict(root, name, undefined, await readRef(root, name).catch(() => undefined), 'another writer is updating it right now');
        throw err;
      }
      await unlink(lock).catch(() => undefined);
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

/** Whether a lock file's writer is gone: a process of this host that no longer runs, or a lock older than {@link STALE_LOCK_MS}. */
async function staleLock(lock: string): Promise<boolean> {
  const info = await stat(lock).catch(() => undefined);
  if (info === undefined) return true;
  if (Date.now() - info.mtimeMs > STALE_LOCK_MS) return true;
  const owner = /^(.*)\.(\d+)$/.exec((await readFile(lock, 'utf8').catch(() => '')).trim());
  return owner !== null && owner[1] === HOST && Number(owner[2]) !== process.pid && !processAlive(Number(owner[2]));
}

/** Removes a ref name; returns whether it existed. */
export async function deleteRef(root: string, name: string): Promise<boolean> {
  const file = refPath(root, name);
  try {
    await unlink(file);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return false;
    if (isErrno(err, 'EISDIR') || isErrno(err, 'EPERM')) throw new StoreError(`cannot remove '${name}': it is a folder of names in store ${root}, not a name (see gymflow store ls)`);
    throw err;
  }
  await fsyncDir(path.dirname(file));
  return true;
}

/** The target of `refs/<name>`, or `undefined`. */
export async function readRef(root: string, name: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(refPath(root, name), 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'EISDIR')) return undefined;
    throw err;
  }
  return assertRef(text.trim(), `refs/${name}`);
}

/** Every ref name and its target, sorted by name, and the ref files that hold no ref, with why. */
export async function scanRefs(root: string): Promise<{ refs: { name: string; ref: string }[]; bad: BadRef[] }> {
  const bad: BadRef[] = [];
  const out: { name: string; ref: string }[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return;
      throw err;
    }
    for (const e of entries) {
      const name = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(path.join(dir, e.name), name);
      else if (e.isFile()) {
        let ref: string | undefined;
        try {
          ref = await readRef(root, name);
        } catch (err) {
          if (!(err instanceof StoreError)) throw err;
          bad.push({ name, path: refPath(root, name), message: err.message });
        }
        if (ref) out.push({ name, ref });
      }
    }
  };
  await walk(path.join(root, 'refs'), '');
  return { refs: out.sort((a, b) => a.name.localeCompare(b.name)), bad };
}
