import { createHash } from 'node:crypto';
import { EXEC_LOST, execFailure, packTar, SandboxError, type Sandbox } from '../../sandbox/index.js';
import { gradeTests, parsePytestPassed, type TestOutcome } from './grading.js';
import type { SandboxTask } from './tasks.js';

/** The git tag that marks a task's base state inside the sandbox. */
export const BASE_TAG = 'gymflow-base';

/** Makes /work a git repository with one commit (fixed identity and dates, so it is the same every time). */
const GIT_INIT_SCRIPT = `
export GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z
git init -q && git add -A && git commit -qm "base state" && git tag ${BASE_TAG}
`;

const initialArchives = new Map<string, Promise<Buffer>>();

function taskKey(task: SandboxTask): string {
  const h = createHash('sha256');
  for (const [p, c] of Object.entries(task.files).sort(([a], [b]) => a.localeCompare(b))) h.update(`${p}\0${c}\0`);
  return `${task.id}:${h.digest('hex').slice(0, 16)}`;
}

/**
 * Attempts at building a task's base state. An exec the engine lost on the way (the sandbox recovers on its own) is
 * no fault of the task's, and the build starts again from the task's files; a command that fails is the task's.
 */
export const BASE_STATE_ATTEMPTS = 3;

async function buildInitialArchive(sb: Sandbox, task: SandboxTask): Promise<Buffer> {
  const files = await packTar(Object.entries(task.files).map(([path, content]) => ({ path, content })));
  for (let attempt = 1; ; attempt++) {
    try {
      await sb.reset(files);
      const r = await sb.exec(['sh', '-c', GIT_INIT_SCRIPT], { timeoutS: 60 });
      if (r.exitCode !== 0) throw execFailure(`task ${task.id}: git init of the base state`, r);
      return await sb.getTar();
    } catch (err) {
      if (!(err instanceof SandboxError) || err.code !== EXEC_LOST || attempt >= BASE_STATE_ATTEMPTS) throw err;
    }
  }
}

/**
 * The tar of /work at the start of a task: its files plus a `.git` with one commit tagged `gymflow-base`.
 * Built once per task and process (in the given sandbox, which is left in that state); later resets just
 * extract it (one exec).
 */
export async function initialArchive(sb: Sandbox, task: SandboxTask): Promise<Buffer> {
  const key = taskKey(task);
  let found = initialArchives.get(key);
  if (!found) {
    found = buildInitialArchive(sb, task);
    initialArchives.set(key, found);
    found.catch(() => initialArchives.delete(key));
    const archive = await found;
    await sb.reset(archive);
    return archive;
  }
  const archive = await found;
  await sb.reset(archive);
  return archive;
}

/**
 * The task's initial archive when this process has built it (or is building it), without touching any
 * sandbox; undefined otherwise (then {@link initialArchive} must build it in a sandbox).
 */
export function cachedInitialArchive(task: SandboxTask): Promise<Buffer> | undefined {
  return initialArchives.get(taskKey(task));
}

/** Saves all of /work (a tar through `tar -c`, modes and times kept). Fails when the agent made something unreadable. */
const SAVE_WORK = ['tar', '-c', '-f', '-', '.'];
/** Empties /work and extracts the saved tar from stdin (modes kept: `-p`). Fixed text. */
const RESTORE_WORK = `
find /work -mindepth 1 -delete 2>/dev/null || { chmod -R u+rwX /work 2>/dev/null; find /work -mindepth 1 -delete; } || exit 4
tar -x -p -f - -C /work || exit 3
`;
/** Saves the paths of "$@" that exist (files or whole directories), as far as they are readable. Fixed text. */
const SAVE_PATHS = `for p; do if [ -e "$p" ] || [ -L "$p" ]; then printf '%s\\0' "$p"; fi; done | tar -c --null --ignore-failed-read -T - -f -`;
/** Removes the paths of "$@" and extracts the saved tar from stdin. Fixed text. */
const RESTORE_PATHS = 'rm -rf -- "$@" && tar -x -p -f -';

/** What {@link runTaskTests} saved before writing the test files: all of /work, or only the test-file paths. */
type Saved = { whole: true; tar: Buffer } | { whole: false; tar: Buffer; paths: string[] };

async function saveWork(sb: Sandbox, paths: string[]): Promise<Saved> {
  const all = await sb.exec(SAVE_WORK, { rawStdout: true, timeoutS: 60 });
  if (all.exitCode === 0 && all.stdout !== undefined) return { whole: true, tar: all.stdout };
  // Something in /work is unreadable to the agent user (its own doing): keep at least the paths the tests overwrite.
  const some = await sb.exec(['sh', '-c', SAVE_PATHS, 'save', ...paths], { rawStdout: true, timeoutS: 60 });
  if (some.exitCode !== 0 || some.stdout === undefined) throw new SandboxError(`saving /work before the tests failed (exit ${some.exitCode}): ${some.output.trim()}`);
  return { whole: false, tar: some.stdout, paths };
}

async function restoreWork(sb: Sandbox, saved: Saved): Promise<void> {
  const r = saved.whole
    ? await sb.exec(['sh', '-c', RESTORE_WORK], { stdin: saved.tar, timeoutS: 60 })
    : await sb.exec(['sh', '-c', RESTORE_PATHS, 'restore', ...saved.paths], { stdin: saved.tar, timeoutS: 60 });
  if (r.exitCode !== 0) throw new SandboxError(`restoring /work after the tests failed (exit ${r.exitCode}): ${r.output.trim()}`);
}

/** Options of {@link runTaskTests}. */
export interface RunTaskTestsOptions {
  /**
   * Put /work back as it was before the test files were written (default true): the hidden tests, and
   * anything the test command wrote, are gone afterwards, so an agent that goes on working (the CLI's
   * `exec … submit`, {@link SandboxEnv.runTests}) cannot read them. The environment's own `submit` ends the
   * episode and skips it (the next reset restores everything).
   */
  restore?: boolean;
}

/**
 * Applies a task's test patch (its test files written over whatever the agent left) and runs the task's
 * test command; grades the pytest report against FAIL_TO_PASS / PASS_TO_PASS. Then, unless
 * `restore: false`, /work is put back exactly as it was before (all of it; when the agent made something
 * unreadable, the test files' paths).
 */
export async function runTaskTests(sb: Sandbox, task: SandboxTask, timeoutS: number, options: RunTaskTestsOptions = {}): Promise<TestOutcome & { output: string }> {
  const write = Object.entries(task.testFiles).filter((e): e is [string, string] => e[1] !== null);
  const remove = Object.entries(task.testFiles).filter(([, c]) => c === null).map(([path]) => path);
  const saved = options.restore === false ? undefined : await saveWork(sb, Object.keys(task.testFiles));
  let r;
  try {
    if (write.length) await sb.putTar(await packTar(write.map(([path, content]) => ({ path, content }))));
    if (remove.length) await sb.exec(['rm', '-f', '--', ...remove]);
    r = await sb.exec(['bash', '-c', task.testCmd], { timeoutS, outputCapBytes: 1024 * 1024 });
  } finally {
    if (saved) await restoreWork(sb, saved);
  }
  return { ...gradeTests(parsePytestPassed(r.output), task.failToPass, task.passToPass), output: r.output };
}
