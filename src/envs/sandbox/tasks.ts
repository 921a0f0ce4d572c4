import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { TaskError } from '../../core/errors.js';
import type { Split, TaskInfo } from '../../core/types.js';
import { applyUnifiedDiff } from './patch.js';

/** The tasks shipped with gymflow: `tasks/tasks.jsonl` beside this file. */
export const BUILTIN_TASKS_FILE = join(dirname(fileURLToPath(import.meta.url)), 'tasks', 'tasks.jsonl');

/** The default test command: pytest with a per-test report (`-rA`) and no cache files. */
export const DEFAULT_TEST_CMD = 'python3 -m pytest -rA -p no:cacheprovider -q';

/**
 * One line of a tasks JSONL file — SWE-bench's instance fields, plus ways to give the repository state:
 *
 * - `instance_id`, `problem_statement`, `patch` (the reference fix), `test_patch` (tests applied before
 *   grading), `FAIL_TO_PASS`, `PASS_TO_PASS` (pytest node ids; a JSON array or, as in SWE-bench's dataset, a
 *   string holding one) — as in SWE-bench;
 * - the base state: `repo` (a directory, relative to the JSONL file) or `files` (`{ path: content }`);
 *   `base_commit` is accepted and ignored (the state *is* the base);
 * - `patch_file` / `test_patch_file`: the patches as files instead of inline strings;
 * - `test_cmd` (default {@link DEFAULT_TEST_CMD}), `split` (`train` | `heldout`, default `train`).
 */
export const TaskLineSchema = z
  .object({
    instance_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, _ . - only'),
    problem_statement: z.string().min(1),
    repo: z.string().optional(),
    files: z.record(z.string(), z.string()).optional(),
    base_commit: z.string().optional(),
    patch: z.string().optional(),
    patch_file: z.string().optional(),
    test_patch: z.string().optional(),
    test_patch_file: z.string().optional(),
    FAIL_TO_PASS: z.union([z.array(z.string()), z.string()]),
    PASS_TO_PASS: z.union([z.array(z.string()), z.string()]).default([]),
    test_cmd: z.string().optional(),
    split: z.enum(['train', 'heldout']).default('train'),
  })
  .refine((t) => (t.repo === undefined) !== (t.files === undefined), { message: 'give exactly one of repo, files' });

/** A task ready to run: the base files in memory, the test files after `test_patch`, the tests to check. */
export interface SandboxTask {
  id: string;
  instruction: string;
  split: Split;
  /** The repository's base state (path → content). */
  files: Record<string, string>;
  /** The reference fix (unified diff). */
  patch: string;
  /** The test patch as a diff and as the files it produces (path → content, `null` = deleted). */
  testPatch: string;
  testFiles: Record<string, string | null>;
  failToPass: string[];
  passToPass: string[];
  testCmd: string;
}

function readDir(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (name === '.git' || name === '__pycache__') continue;
      if (statSync(full).isDirectory()) walk(full);
      else out[relative(root, full).split('\\').join('/')] = readFileSync(full, 'utf8');
    }
  };
  walk(root);
  return out;
}

/**
 * Why `path` cannot name a file of the work directory (absolute, a `..` or empty segment, a NUL), or
 * undefined when it can. Such a path would land outside /work or fail in `tar` only at reset.
 */
export function badWorkPath(path: string): string | undefined {
  if (path === '') return 'empty path';
  if (path.includes('\0')) return 'path contains a NUL character';
  if (path.startsWith('/')) return 'absolute path; paths are relative to the work directory';
  const parts = path.split('/');
  if (parts.includes('..')) return "path leaves the work directory ('..')";
  if (parts.some((p) => p === '' || p === '.')) return "path has an empty or '.' segment";
  return undefined;
}

/** Runs `read`, turning a file-system error into a {@link TaskError} that says what `what` is. */
function readOr<T>(what: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (typeof e.code !== 'string') throw err;
    const why = e.code === 'ENOENT' ? 'no such file or directory' : e.code === 'EISDIR' ? 'is a directory' : e.code === 'ENOTDIR' ? 'not a directory' : e.code === 'EACCES' ? 'permission denied' : e.message;
    throw new TaskError(`${what}: ${why}`);
  }
}

/**
 * A `FAIL_TO_PASS` / `PASS_TO_PASS` list: an array of test ids as is, or (as in SWE-bench's published data set)
 * a string holding a JSON array of them. A {@link TaskError} at `where` otherwise.
 */
export function parseTestIds(v: string[] | string, where: string): string[] {
  if (Array.isArray(v)) return v;
  try {
    const parsed: unknown = JSON.parse(v);
    if (Array.isArray(parsed) && parsed.every((x) => typeof x === 'string')) return parsed;
  } catch {
    // fall through
  }
  throw new TaskError(`${where}: expected a JSON array of test ids, got ${JSON.stringify(v).slice(0, 80)}`);
}

/**
 * Reads a tasks JSONL file. Errors name the file, the line and what is wrong.
 *
 * @example
 * ```ts
 * const tasks = loadTasks('my-tasks.jsonl');  // one SWE-bench-style instance per line
 * ```
 */
export function loadTasks(file: string): SandboxTask[] {
  const base = dirname(resolve(file));
  const text = readOr(`${file}: cannot read the tasks file`, () => readFileSync(file, 'utf8'));
  const tasks: SandboxTask[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${file}:${i + 1}`;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      throw new TaskError(`${where}: not JSON: ${(err as Error).message}`);
    }
    const parsed = TaskLineSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TaskError(`${where} $.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid task'}`);
    }
    const t = parsed.data;
    if (seen.has(t.instance_id)) throw new TaskError(`${where}: duplicate instance_id '${t.instance_id}'`);
    seen.add(t.instance_id);
    for (const key of Object.keys(t.files ?? {})) {
      const bad = badWorkPath(key);
      if (bad !== undefined) throw new TaskError(`${where} $.files[${JSON.stringify(key)}]: ${bad}`);
    }
    const files = t.files ?? readOr(`${where} $.repo: cannot read ${resolve(base, t.repo as string)}`, () => readDir(resolve(base, t.repo as string)));
    const readPatch = (field: string, f: string): string => readOr(`${where} $.${field}: cannot read ${resolve(base, f)}`, () => readFileSync(resolve(base, f), 'utf8'));
    const patch = t.patch ?? (t.patch_file === undefined ? '' : readPatch('patch_file', t.patch_file));
    const testPatch = t.test_patch ?? (t.test_patch_file === undefined ? '' : readPatch('test_patch_file', t.test_patch_file));
    const testFiles = Object.fromEntries(applyUnifiedDiff(files, testPatch, `${where} test_patch`));
    // The reference patch must apply to the base state: catch a broken task at load time.
    const fixed = applyUnifiedDiff(files, patch, `${where} patch`);
    for (const [field, touched] of [['test_patch', Object.keys(testFiles)], ['patch', [...fixed.keys()]]] as const) {
      for (const path of touched) {
        const bad = badWorkPath(path);
        if (bad !== undefined) throw new TaskError(`${where} $.${field}: file ${JSON.stringify(path)}: ${bad}`);
      }
    }
    tasks.push({
      id: t.instance_id,
      instruction: t.problem_statement,
      split: t.split,
      files,
      patch,
      testPatch,
      testFiles,
      failToPass: parseTestIds(t.FAIL_TO_PASS, `${where} $.FAIL_TO_PASS`),
      passToPass: parseTestIds(t.PASS_TO_PASS, `${where} $.PASS_TO_PASS`),
      testCmd: t.test_cmd ?? DEFAULT_TEST_CMD,
    });
  });
  if (tasks.length === 0) throw new TaskError(`${file}: no tasks`);
  return tasks;
}

let builtin: SandboxTask[] | undefined;

/** The built-in tasks (loaded once). */
export function builtinTasks(): SandboxTask[] {
  builtin ??= loadTasks(BUILTIN_TASKS_FILE);
  return builtin;
}

/** The public description of a task: no patch, no test names. */
export function sandboxTaskInfo(t: SandboxTask): TaskInfo {
  return {
    id: t.id,
    domain: 'coding',
    instruction: t.instruction,
    split: t.split,
    metadata: { files: Object.keys(t.files).length, failToPass: t.failToPass.length, passToPass: t.passToPass.length },
  };
}
