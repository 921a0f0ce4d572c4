import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigError, GymflowError } from '../../core/errors.js';
import { checkNewOutput, writeFileAtomically } from '../../core/output-file.js';
import { getProfile } from '../../core/profiles/index.js';
import { ToolValidator } from '../../core/tool-validator.js';
import { parseTrajectory, type Trajectory } from '../../core/trajectory.js';
import type { Action } from '../../core/types.js';
import { SANDBOX_ENV_ID, SandboxEnv } from '../../envs/sandbox/env.js';
import { BUILTIN_TASKS_FILE, builtinTasks, loadTasks, type SandboxTask } from '../../envs/sandbox/tasks.js';
import { dispatchTool } from '../../envs/sandbox/tools.js';
import { initialArchive, runTaskTests } from '../../envs/sandbox/workspace.js';
import {
  buildSandboxImage,
  buildSnapshot,
  diffArchive,
  dockerClient,
  gcSandboxes,
  listSandboxes,
  LABEL_TASK,
  packTar,
  Sandbox,
} from '../../sandbox/index.js';
import { printJson } from '../options.js';
import { formatTable } from '../table.js';
import { defined } from '../../core/defined.js';

/** Label naming the tasks file a CLI sandbox was created from (so later commands find its task). */
const LABEL_TASKS_FILE = 'gymflow.sandbox.tasks-file';

/** The tasks of a file (the built-in ones when none); a file that cannot be read is named as the tasks file. */
export function tasksFrom(file: string | undefined): SandboxTask[] {
  return file === undefined || file === BUILTIN_TASKS_FILE ? builtinTasks() : loadTasks(file);
}

/** The task `id` of `tasks`; a {@link ConfigError} listing the known ids when there is none. */
export function findTask(tasks: readonly SandboxTask[], id: string): SandboxTask {
  const t = tasks.find((x) => x.id === id);
  if (!t) throw new ConfigError(`no task '${id}'; known: ${tasks.map((x) => x.id).join(', ')}`);
  return t;
}

/** The task a sandbox was created for (from its labels), if any. */
async function taskOf(id: string): Promise<SandboxTask | undefined> {
  const info = await dockerClient().getContainer(id).inspect();
  const taskId = info.Config.Labels?.[LABEL_TASK];
  if (taskId === undefined) return undefined;
  return findTask(tasksFrom(info.Config.Labels?.[LABEL_TASKS_FILE]), taskId);
}

/** What one tool call in a sandbox returned (`gymflow sandbox exec`, the MCP tool `execute_tool`). */
export interface SandboxToolResult {
  observation: string;
  exitCode: number;
  truncated: boolean;
  durationMs: number;
  /** `submit` only: the task's test outcome (without the raw output). */
  tests?: Record<string, unknown>;
  /** The container that replaced one that stopped answering. */
  replacedBy?: string;
}

/** The tools a sandbox runs: the coding profile's (`file_read`, `file_write`, `shell`, `search`, `git`, `submit`). */
export function sandboxToolNames(): string[] {
  return getProfile('coding').tools.map((t) => t.name);
}

/**
 * Creates a sandbox, with its task's repository in /work when `task` is given. `tasksFile` (default: the built-in
 * tasks) is read and checked even without a task; `labels` are added to the container's.
 *
 * @throws ConfigError for an unknown task or an unreadable tasks file.
 */
export async function createSandbox(options: { task?: string; tasksFile?: string; image?: string; detached?: boolean; labels?: Record<string, string> }): Promise<{ box: Sandbox; task: SandboxTask | undefined }> {
  const tasks = options.tasksFile === undefined ? undefined : tasksFrom(options.tasksFile);
  const task = options.task === undefined ? undefined : findTask(tasks ?? tasksFrom(undefined), options.task);
  const box = await Sandbox.create({
    detached: options.detached === true,
    ...(task ? { task: task.id } : {}),
    config: { labels: options.labels ?? {}, ...defined({ image: options.image }) },
  });
  try {
    if (task) await initialArchive(box, task);
  } catch (err) {
    await box.destroy().catch(() => undefined);
    throw err;
  }
  return { box, task };
}

/**
 * Runs one tool call in a sandbox: the action is checked against the coding profile's tool schemas first, and
 * `submit` runs the task's tests (it needs a task).
 *
 * @throws ConfigError naming the tool and the parameter that is wrong, or a submit without a task.
 */
export async function runSandboxTool(box: Sandbox, task: SandboxTask | undefined, action: Action, name = box.id): Promise<SandboxToolResult> {
  const problem = new ToolValidator(getProfile('coding').tools).check(action);
  if (problem) throw new ConfigError(`${action.tool}: ${problem.message}`);
  if (action.tool === 'submit') {
    if (!task) throw new ConfigError(`sandbox ${name} has no task: create it with a task to submit`);
    const started = performance.now();
    const { output: _o, ...tests } = await runTaskTests(box, task, 120);
    return { observation: tests.success ? 'resolved' : 'not resolved', exitCode: tests.success ? 0 : 1, truncated: false, durationMs: Math.round(performance.now() - started), tests: { ...tests } };
  }
  const before = box.id;
  const o = await dispatchTool(box, action, { shellTimeoutS: 30, maxShellTimeoutS: 300 });
  // A sandbox that stopped answering was replaced: its id changed, say so.
  return { observation: o.observation, exitCode: o.exitCode, truncated: o.truncated, durationMs: Math.round(o.durationMs), ...(o.replaced || box.id !== before ? { replacedBy: box.id } : {}) };
}

/** Restores a sandbox's /work to its task's initial state (empty without a task). */
export async function resetSandbox(box: Sandbox, task: SandboxTask | undefined): Promise<{ durationMs: number; replacedBy?: string }> {
  const before = box.id;
  const started = performance.now();
  if (task) await initialArchive(box, task);
  else await box.reset(await packTar([]));
  return { durationMs: Math.round(performance.now() - started), ...(box.id === before ? {} : { replacedBy: box.id }) };
}

/**
 * Writes a sandbox's snapshot to `output` (a tar file: the file-system diff against the task's initial state, plus
 * facts: the container, the task, `git status`, the hardening), atomically; an existing file only with `force`.
 * Returns the diff's summary.
 */
export async function snapshotSandbox(box: Sandbox, task: SandboxTask | undefined, output: string, force: boolean): Promise<Awaited<ReturnType<typeof diffArchive>>['diff']> {
  // A sandbox's state may be gone by the next try: an earlier snapshot is kept unless replaced on purpose.
  await checkNewOutput(output, { force });
  const { diff, changed } = await diffArchive(task?.files ?? {}, await box.getTar());
  const git = await box.exec(['git', '--no-pager', 'status', '--short']);
  const facts = {
    kind: 'gymflow.sandbox.snapshot',
    takenAt: new Date().toISOString(),
    sandbox: await box.facts(),
    task: task ? { id: task.id, failToPass: task.failToPass, passToPass: task.passToPass } : null,
    gitStatus: git.exitCode === 0 ? git.output : null,
    hardening: box.config,
  };
  await writeFileAtomically(output, await buildSnapshot(facts, diff, changed), { replace: force });
  return diff;
}

function parseParams(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`--params: not JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ConfigError('--params: expected a JSON object');
  return value as Record<string, unknown>;
}

/**
 * Reads the trajectory `replay` takes: a JSON file, or a JSONL file's first line. Errors name the file.
 */
export function readTrajectoryFile(file: string): Trajectory {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a directory, not a trajectory file' : e.code === 'EACCES' ? 'permission denied' : e.message;
    throw new ConfigError(`replay: cannot read ${file}: ${why}`);
  }
  text = text.replace(/^\uFEFF/, '').trim();
  if (text === '') throw new ConfigError(`replay: ${file} is empty; expected a trajectory (JSON, or JSONL: its first line)`);
  const first = text.startsWith('{') && text.includes('\n{') ? (text.split('\n')[0] as string) : text;
  let value: unknown;
  try {
    value = JSON.parse(first);
  } catch (err) {
    throw new ConfigError(`replay: ${file}${first === text ? '' : ':1'}: not JSON: ${(err as Error).message}`);
  }
  return parseTrajectory(value, file);
}

/**
 * An observation with its run times masked (`1 passed in 0.01s` → `1 passed in <time>`, `0:00:01.5` and
 * `real 0m0.003s` alike): a test run or a `time` never takes the same time twice, and a replay that stops at
 * the first pytest step would be of no use. Only numbers glued to a time unit are masked.
 */
export function maskTimings(observation: string): string {
  return observation
    .replace(/\b\d+m\d+(?:\.\d+)?s\b/g, '<time>')
    .replace(/\b\d+(?:\.\d+)?(?:ms|s)\b/g, '<time>')
    .replace(/\b\d+:\d{2}:\d{2}(?:\.\d+)?\b/g, '<time>');
}

/** What a caller of {@link replayTrajectory} may follow and stop it with. */
export interface ReplayHooks {
  /** After each replayed step: steps replayed, steps in the trajectory. */
  onStep?: (replayed: number, steps: number) => void | Promise<void>;
  /** Stops the replay before its next step (a `CANCELLED` error). */
  signal?: AbortSignal;
}

/**
 * Replays a trajectory's actions in a fresh sandbox; reports the first step whose observation differs, run times
 * aside ({@link maskTimings}) unless `exact`.
 */
export async function replayTrajectory(t: Trajectory, tasksFile?: string, exact = false, hooks: ReplayHooks = {}): Promise<{
  trajectory: string;
  task: string;
  steps: number;
  replayed: number;
  firstDivergentStep: number | null;
  divergence?: { expected: string; actual: string };
  outcome: { recorded: boolean; replayed: boolean | undefined };
}> {
  if (t.envId !== SANDBOX_ENV_ID) throw new ConfigError(`replay: trajectory ${t.id} is from ${t.envId}, not ${SANDBOX_ENV_ID}`);
  const env = new SandboxEnv(defined({ tasks: tasksFile }));
  try {
    await env.reset({ task: t.task.id });
    let replayed = 0;
    let success: boolean | undefined;
    for (const step of t.steps) {
      if (hooks.signal?.aborted === true) throw new GymflowError('CANCELLED', `replay: cancelled after ${replayed} of ${t.steps.length} steps`);
      const ts = await env.step(step.action);
      replayed += 1;
      await hooks.onStep?.(replayed, t.steps.length);
      const same = exact ? ts.observation === step.observation : maskTimings(ts.observation) === maskTimings(step.observation);
      if (!same) {
        return {
          trajectory: t.id,
          task: t.task.id,
          steps: t.steps.length,
          replayed,
          firstDivergentStep: step.index,
          divergence: { expected: step.observation, actual: ts.observation },
          outcome: { recorded: t.outcome.success, replayed: undefined },
        };
      }
      if (ts.terminated || ts.truncated) {
        success = ts.info.success === true;
        break;
      }
    }
    return { trajectory: t.id, task: t.task.id, steps: t.steps.length, replayed, firstDivergentStep: null, outcome: { recorded: t.outcome.success, replayed: success } };
  } finally {
    await env.close();
  }
}

/**
 * `gymflow sandbox …`: build the image, manage sandboxes that outlive the CLI process, run tools in them,
 * snapshot and replay. Every sub-command prints JSON.
 */
export function sandboxCommand(program: Command): void {
  const sb = program.command('sandbox').description('Docker sandboxes for gymflow/sandbox-v0: image, create, exec, reset, snapshot, replay, destroy, ls, gc');

  sb.command('build-image')
    .description('build gymflow/sandbox:<recipe-hash> (+ :latest) offline with debootstrap; no-op when it exists')
    .option('--force', 'rebuild even when the tagged image exists')
    .action(async (opts: { force?: boolean }) => {
      const started = Date.now();
      const image = await buildSandboxImage({ force: opts.force === true });
      printJson({ image, seconds: (Date.now() - started) / 1000 });
    });

  sb.command('create')
    .description('create a sandbox that lives until `destroy` (with --task: the task repository in /work)')
    .option('--task <id>', 'task id')
    .option('--tasks <file>', 'tasks JSONL (default: the built-in tasks)')
    .option('--image <ref>', 'image (default gymflow/sandbox:latest)')
    .action(async (opts: { task?: string; tasks?: string; image?: string }) => {
      // The tasks file is recorded by its absolute path: later commands (`exec … submit`, `reset`) may run from
      // another directory.
      const labels: Record<string, string> = opts.tasks === undefined ? {} : { [LABEL_TASKS_FILE]: resolve(opts.tasks) };
      const { box, task } = await createSandbox({ detached: true, labels, ...defined({ task: opts.task, tasksFile: opts.tasks, image: opts.image }) });
      printJson({ id: box.id, task: task?.id ?? null, image: box.config.image });
      // Its id is out: from now on it outlives this process (until `destroy`), even on Ctrl-C.
      box.handOver();
    });

  sb.command('exec')
    .description('run one coding tool in a sandbox; prints { observation, exitCode, truncated, durationMs }')
    .argument('<id>', 'sandbox id')
    .argument('<tool>', 'file_read | file_write | shell | search | git | submit')
    .option('--params <json>', 'the tool parameters as a JSON object', '{}')
    .action(async (id: string, tool: string, opts: { params: string }) => {
      const action = { tool, params: parseParams(opts.params) };
      const problem = new ToolValidator(getProfile('coding').tools).check(action);
      if (problem) throw new ConfigError(`${tool}: ${problem.message}`);
      const box = await Sandbox.attach(id);
      const task = tool === 'submit' ? await taskOf(id) : undefined;
      printJson(await runSandboxTool(box, task, action, id));
      box.handOver();
    });

  sb.command('reset')
    .description("restore a sandbox's /work to its task's initial state (empty without a task)")
    .argument('<id>', 'sandbox id')
    .action(async (id: string) => {
      const box = await Sandbox.attach(id);
      const task = await taskOf(id);
      printJson({ id, task: task?.id ?? null, ...(await resetSandbox(box, task)) });
      box.handOver();
    });

  sb.command('snapshot')
    .description('write the filesystem diff against the initial state plus facts as one tar file')
    .argument('<id>', 'sandbox id')
    .requiredOption('-o, --output <file>', 'snapshot file (.tar)')
    .option('--force', 'replace an existing snapshot file (by default an error)')
    .action(async (id: string, opts: { output: string; force?: boolean }) => {
      await checkNewOutput(opts.output, { force: opts.force === true });
      const box = await Sandbox.attach(id);
      const task = await taskOf(id);
      printJson({ output: opts.output, ...(await snapshotSandbox(box, task, opts.output, opts.force === true)) });
    });

  sb.command('replay')
    .description("re-execute a trajectory's actions in a fresh sandbox; reports the first divergent step")
    .argument('<trajectory>', 'trajectory JSON file (or JSONL: its first line)')
    .option('--tasks <file>', 'tasks JSONL (default: the built-in tasks)')
    .option('--exact', 'compare observations byte for byte (by default run times such as "in 0.01s" may differ)')
    .action(async (file: string, opts: { tasks?: string; exact?: boolean }) => {
      const result = await replayTrajectory(readTrajectoryFile(file), opts.tasks, opts.exact === true);
      printJson(result);
      if (result.firstDivergentStep !== null) process.exitCode = 1;
    });

  sb.command('destroy')
    .description('remove a sandbox, running or stopped (only gymflow sandboxes)')
    .argument('<id>', 'sandbox id')
    .action(async (id: string) => {
      await Sandbox.remove(id);
      printJson({ id, destroyed: true });
    });

  sb.command('ls')
    .description('list gymflow sandboxes, running or stopped: id, task, state, who owns them')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const boxes = await listSandboxes(dockerClient());
      if (opts.json) return printJson(boxes);
      if (boxes.length === 0) return console.log('no gymflow sandboxes');
      const rows = boxes.map((b) => ({ ...b, id: b.id.slice(0, 12), task: b.task ?? '-', owner: b.detached ? 'detached' : b.owner, created: b.created ?? '-' }));
      console.log(formatTable(rows, [{ key: 'id' }, { key: 'task' }, { key: 'state' }, { key: 'owner' }, { key: 'created' }, { key: 'image' }]));
    });

  sb.command('gc')
    .description('remove orphaned sandboxes (their creating process is gone); --all removes every gymflow sandbox')
    .option('--all', 'also detached sandboxes and those of other hosts')
    .action(async (opts: { all?: boolean }) => {
      printJson(await gcSandboxes(dockerClient(), { all: opts.all === true }));
    });
}
