/**
 * The MCP server's workspace root: every path a tool reads or writes is resolved against it and must stay
 * inside it — lexically (no `..` out, no absolute path elsewhere) and after resolving links (a link inside the
 * root that points out of it is refused too).
 */
import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { GymflowError } from '../../core/errors.js';
import { walkFiles } from '../../recorder/convert.js';

/** A path a tool was given that lies outside the workspace root, or is not there. */
export class WorkspacePathError extends GymflowError {
  constructor(message: string) {
    super('WORKSPACE_PATH', message);
  }
}

/** Whether `p` is `dir` or lies below it (both absolute and normalised). */
function isWithin(dir: string, p: string): boolean {
  const rel = relative(dir, p);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The directory tools are confined to.
 *
 * @example
 * ```ts
 * const root = await WorkspaceRoot.open('/home/me/project');
 * await root.input('logs/run.jsonl', 'path');   // → /home/me/project/logs/run.jsonl
 * await root.input('../etc/passwd', 'path');    // WorkspacePathError: path: ../etc/passwd is outside …
 * ```
 */
export class WorkspaceRoot {
  private constructor(
    /** The root as given, absolute. */
    readonly dir: string,
    /** The root with its links resolved: what resolved paths are compared with. */
    readonly real: string,
  ) {}

  /** Opens `dir` (default: the working directory) as the root; it must be an existing directory. */
  static async open(dir: string = process.cwd()): Promise<WorkspaceRoot> {
    const abs = resolve(dir);
    let real: string;
    try {
      real = await realpath(abs);
    } catch (err) {
      throw new WorkspacePathError(`--root ${dir}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such directory' : (err as Error).message}`);
    }
    if (!(await lstat(real)).isDirectory()) throw new WorkspacePathError(`--root ${dir}: not a directory`);
    return new WorkspaceRoot(abs, real);
  }

  /** `p` resolved against the root, refused when it lies outside it lexically. */
  private lexical(p: string, field: string): string {
    if (p === '') throw new WorkspacePathError(`${field}: empty path`);
    if (p.includes('\0')) throw new WorkspacePathError(`${field}: a path cannot contain a NUL byte`);
    const abs = resolve(this.dir, p);
    if (!isWithin(this.dir, abs) && !isWithin(this.real, abs)) throw this.outside(p, field);
    return abs;
  }

  private outside(p: string, field: string, via?: string): WorkspacePathError {
    return new WorkspacePathError(`${field}: ${p} is outside the workspace root ${this.dir}${via === undefined ? '' : ` (a link resolves to ${via})`}; tools read and write only inside it (gymflow mcp --root)`);
  }

  /**
   * An existing file or directory inside the root, as an absolute path.
   *
   * @throws WorkspacePathError naming `field` when it is outside the root (links resolved) or does not exist.
   */
  async input(p: string, field: string): Promise<string> {
    const abs = this.lexical(p, field);
    let real: string;
    try {
      real = await realpath(abs);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A dangling link that points out is still a link out.
      const link = await lstat(abs).catch(() => undefined);
      if (link?.isSymbolicLink()) throw new WorkspacePathError(`${field}: ${p} is a link to nothing (or to a place outside the root)`);
      throw new WorkspacePathError(`${field}: ${p}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message} (in ${this.dir})`);
    }
    if (!isWithin(this.real, real)) throw this.outside(p, field, real);
    return abs;
  }

  /**
   * A file to write inside the root, as an absolute path: its directory must exist inside the root (links
   * resolved), and an existing file or link there must resolve inside it too.
   *
   * @throws WorkspacePathError naming `field`.
   */
  async output(p: string, field: string): Promise<string> {
    const abs = this.lexical(p, field);
    const existing = await lstat(abs).catch(() => undefined);
    if (existing !== undefined) {
      const real = await realpath(abs).catch(() => undefined);
      if (real === undefined) throw new WorkspacePathError(`${field}: ${p} is a link to nothing (or to a place outside the root); refusing to write through it`);
      if (!isWithin(this.real, real)) throw this.outside(p, field, real);
      return abs;
    }
    const parent = dirname(abs);
    let realParent: string;
    try {
      realParent = await realpath(parent);
    } catch {
      throw new WorkspacePathError(`${field}: ${p}: its directory ${relative(this.dir, parent) || '.'} does not exist (in ${this.dir})`);
    }
    if (!isWithin(this.real, realParent)) throw this.outside(p, field, realParent);
    return abs;
  }

  /**
   * A file inside the root when `spec` names one that exists ({@link input}), else `spec` itself as a name (a store
   * ref or ref name); a path outside the root is refused either way.
   */
  async inputOrName(spec: string, field: string): Promise<string> {
    const abs = this.lexical(spec, field);
    const exists = await lstat(abs).then(
      () => true,
      () => false,
    );
    return exists ? this.input(spec, field) : spec;
  }

  /** A directory to create or use inside the root (an artifact store): {@link input} when it exists, else {@link output}. */
  async directory(p: string, field: string): Promise<string> {
    const abs = this.lexical(p, field);
    const exists = await lstat(abs).then(
      () => true,
      () => false,
    );
    return exists ? this.input(p, field) : this.output(p, field);
  }

  /**
   * An existing file or directory inside the root ({@link input}); for a directory, every file a recursive walk
   * meets (links followed, as the recorder's walk follows them) must resolve inside the root too.
   *
   * @throws WorkspacePathError naming `field` and the first file whose link leads out.
   */
  async inputTree(p: string, field: string): Promise<string> {
    const abs = await this.input(p, field);
    if (!(await lstat(await realpath(abs))).isDirectory()) return abs;
    for await (const file of walkFiles(abs)) {
      const real = await realpath(file).catch(() => undefined);
      if (real === undefined) throw new WorkspacePathError(`${field}: ${this.show(file)} (in ${p}) is a link to nothing (or to a place outside the root)`);
      if (!isWithin(this.real, real)) throw this.outside(this.show(file), `${field} (in ${p})`, real);
    }
    return abs;
  }

  /** `abs` as a path relative to the root, for results (`.` for the root itself). */
  show(abs: string): string {
    const rel = relative(this.dir, abs);
    return rel === '' ? '.' : rel;
  }

  /** Whether an absolute path (links resolved by the caller) lies inside the root. */
  contains(absReal: string): boolean {
    return isWithin(this.real, absReal) || isWithin(this.dir, absReal);
  }
}
