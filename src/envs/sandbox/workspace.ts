import { createHash } from 'node:crypto';
import { packTar, SandboxError, type Sandbox } from '../../sandbox/index.js';
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
 * The tar of /work at the start of a task: its files plus a `.git` with one commit tagged `gymflow-base`.
 * Built once per task and process (in the given sandbox, which is left in that state); later resets just
 * extract it (one exec).
 */
export async function initialArchive(sb: Sandbox, task: SandboxTask): Promise<Buffer> {
  const key = taskKey(task);
  let found = initialArchives.get(key);
  if (!found) {
    found = (async () => {
      const files = await packTar(Object.entries(task.files).map(([path, content]) => ({ path, content })));
      await sb.reset(files);
      const r = await sb.exec(['sh', '-c', GIT_INIT_SCRIPT], { timeoutS: 60 });
      if (r.exitCode !== 0) throw new SandboxError(`task ${task.id}: git init of the base state failed: ${r.output.trim()}`);
      return sb.getTar();
    })();
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

/**
 * Applies a task's test patch (its test files written over whatever the agent left) and runs the task's
 * test command; grades the pytest report against FAIL_TO_PASS / PASS_TO_PASS.
 */
export async function runTaskTests(sb: Sandbox, task: SandboxTask, timeoutS: number): Promise<TestOutcome & { output: string }> {
  const write = Object.entries(task.testFiles).filter((e): e is [string, string] => e[1] !== null);
  const remove = Object.entries(task.testFiles).filter(([, c]) => c === null).map(([path]) => path);
  if (write.length) await sb.putTar(await packTar(write.map(([path, content]) => ({ path, content }))));
  if (remove.length) await sb.exec(['rm', '-f', '--', ...remove]);
  const r = await sb.exec(['bash', '-c', task.testCmd], { timeoutS, outputCapBytes: 1024 * 1024 });
  return { ...gradeTests(parsePytestPassed(r.output), task.failToPass, task.passToPass), output: r.output };
}
