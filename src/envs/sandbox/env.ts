import { z } from 'zod';
import { BaseEnv } from '../../core/base-env.js';
import { TaskError } from '../../core/errors.js';
import { getProfile } from '../../core/profiles/index.js';
import type { Action, Split, TaskInfo, TimeStep, ToolSpec } from '../../core/types.js';
import { resolveConfig, Sandbox, SandboxPool, sharedSandboxPool, type CreateSandboxOptions, type SandboxConfig } from '../../sandbox/index.js';
import type { TestOutcome } from './grading.js';
import { parseEnvKwargs } from '../shared/env-kwargs.js';
import { builtinTasks, loadTasks, sandboxTaskInfo, type SandboxTask } from './tasks.js';
import { dispatchTool, toolStepInfo } from './tools.js';
import { cachedInitialArchive, initialArchive, runTaskTests } from './workspace.js';

/** The registered id of this environment. */
export const SANDBOX_ENV_ID = 'gymflow/sandbox-v0';

/** Step limit applied by `make` (the coding profile's step budget). */
export const SANDBOX_MAX_STEPS = 30;

/** The tools: exactly those of the `coding` domain profile (file_read, file_write, shell, search, git, submit). */
export function sandboxTools(): readonly ToolSpec[] {
  return getProfile('coding').tools;
}

/** Keyword arguments of {@link SandboxEnv} (`make('gymflow/sandbox-v0', { kwargs })`). */
export const SandboxEnvOptionsSchema = z.object({
  /** A tasks JSONL file (see docs/sandbox.md); default: the built-in tasks. */
  tasks: z.string().optional(),
  /** Sandbox config overrides (image, limits, hardening switches). */
  sandbox: z.record(z.string(), z.unknown()).optional(),
  /** Time limit of the test run at submit, seconds. */
  testTimeoutS: z.number().int().positive().default(120),
  /** Default and largest time limit of a `shell` call, seconds. */
  shellTimeoutS: z.number().int().positive().default(30),
  maxShellTimeoutS: z.number().int().positive().default(300),
  /**
   * Warm pool of containers already restored to a task's initial state (docs/sandbox.md §3): `'shared'`
   * (default: the process-wide pool, 1 spare per task, 4 in all), a private pool's bounds, a
   * {@link SandboxPool}, or `false` (every reset restores in place).
   */
  pool: z
    .union([
      z.literal(false),
      z.literal('shared'),
      z.object({ sparesPerKey: z.number().int().nonnegative().optional(), maxSpares: z.number().int().nonnegative().optional() }).strict(),
      z.instanceof(SandboxPool),
    ])
    .default('shared'),
})
  // A misspelt option would otherwise be ignored silently (the default applies).
  .strict()
  .refine((o) => o.maxShellTimeoutS >= o.shellTimeoutS, { path: ['maxShellTimeoutS'], message: 'must be at least shellTimeoutS (the default time limit of a shell call)' });
/** Parsed options of {@link SandboxEnv}. */
export type SandboxEnvOptions = z.infer<typeof SandboxEnvOptionsSchema>;

/**
 * `gymflow/sandbox-v0`: fix a Python repository inside a hardened Docker sandbox (SWE-bench's contract).
 * The agent works through the coding tools; `submit` applies the task's test patch, runs the tests and ends
 * the episode (terminated). Success: every FAIL_TO_PASS test passes and every PASS_TO_PASS test still does;
 * reward = score = (F2P passing / F2P) × (P2P passing / P2P). A step limit truncates (`max_steps`).
 *
 * `reset` swaps in a warm spare already restored to the task's initial state when the pool has one (the used
 * container is restored in the background), else restores /work in place from the task's initial tar (one
 * exec); `close` removes the container (and the last environment of a pool destroys its spares).
 */
export class SandboxEnv extends BaseEnv {
  readonly domain = 'coding';
  readonly tools: readonly ToolSpec[] = sandboxTools();
  private readonly options: SandboxEnvOptions;
  private readonly tasks: SandboxTask[];
  private sandbox: Sandbox | undefined;
  private task: SandboxTask | undefined;
  /** The warm pool (undefined when off) and whether this environment owns it (closes it on close). */
  private readonly pool: SandboxPool | undefined;
  private readonly ownsPool: boolean;
  private poolRef = false;

  constructor(kwargs: Record<string, unknown> = {}) {
    super();
    this.options = parseEnvKwargs(SANDBOX_ENV_ID, SandboxEnvOptionsSchema, kwargs);
    // Fail at construction, not at the first reset, on a bad sandbox config.
    resolveConfig((this.options.sandbox ?? {}) as Partial<SandboxConfig>);
    this.tasks = this.options.tasks === undefined ? builtinTasks() : loadTasks(this.options.tasks);
    const pool = this.options.pool;
    this.ownsPool = typeof pool === 'object' && !(pool instanceof SandboxPool);
    this.pool = pool === false ? undefined : pool === 'shared' ? sharedSandboxPool() : pool instanceof SandboxPool ? pool : new SandboxPool(pool);
  }

  /** The warm pool this environment resets through, if any. */
  get sandboxPool(): SandboxPool | undefined {
    return this.pool;
  }

  /** The tasks of a split (both when omitted). */
  override listTasks(split?: Split): TaskInfo[] {
    return this.tasks.filter((t) => split === undefined || t.split === split).map(sandboxTaskInfo);
  }

  /** The full task (with its reference patch) — for experts and tests, never shown to the agent. */
  getTask(id: string): SandboxTask {
    const t = this.tasks.find((x) => x.id === id);
    if (!t) throw new TaskError(`no task '${id}' in gymflow/sandbox-v0; known: ${this.tasks.map((x) => x.id).join(', ')}`);
    return t;
  }

  /** The sandbox of the current episode (after `reset`). */
  get currentSandbox(): Sandbox | undefined {
    return this.sandbox;
  }

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    const train = this.tasks.filter((t) => t.split === 'train');
    const task = options.task === undefined ? this.rng.pick(train.length ? train : this.tasks) : this.getTask(options.task);
    this.task = task;
    const create: CreateSandboxOptions = { config: (this.options.sandbox ?? {}) as Partial<SandboxConfig>, task: task.id };
    const pool = this.pool;
    if (pool && !this.poolRef) {
      pool.ref();
      this.poolRef = true;
    }
    const cached = await cachedInitialArchive(task)?.catch(() => undefined);
    if (pool && cached) {
      // Warm path: a ready spare is swapped in (no exec waited on) and the used container is recycled in
      // the background; without one, the container is restored in place (one exec).
      this.sandbox = (await pool.reset(this.sandbox, cached, create)).sandbox;
    } else {
      // First time this process sees the task: build its archive in the container (which is left restored).
      this.sandbox ??= await Sandbox.create(create);
      const archive = await initialArchive(this.sandbox, task);
      pool?.prepare(archive, create, this.sandbox.config);
    }
    const files = Object.keys(task.files).sort();
    const observation = [
      `Task ${task.id}: ${task.instruction}`,
      '',
      `The repository is in /work (a git repository; the base state is tagged gymflow-base). Files:`,
      ...files.map((f) => `  ${f}`),
      '',
      'Run the tests with `python3 -m pytest -q`. Call submit when you are done: hidden tests decide the outcome.',
    ].join('\n');
    return this.first(observation, sandboxTaskInfo(task));
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    const sb = this.sandbox as Sandbox;
    if (action.tool === 'submit') return this.submit();
    const o = await dispatchTool(sb, action, this.options);
    return this.observe(o.observation, 0, toolStepInfo(o));
  }

  /**
   * Applies the task's test patch and runs its tests in the current sandbox, without ending the episode
   * (for tests of the task data and for the CLI). /work is put back as it was afterwards: the hidden test
   * files do not stay where the agent could read them.
   */
  async runTests(): Promise<TestOutcome & { output: string }> {
    return this.testRun(true);
  }

  private async testRun(restore: boolean): Promise<TestOutcome & { output: string }> {
    const sb = this.sandbox;
    const task = this.task;
    if (!sb || !task) throw new TaskError('runTests() before reset()');
    return runTaskTests(sb, task, this.options.testTimeoutS, { restore });
  }

  private async submit(): Promise<TimeStep> {
    // The episode ends here (no step can follow), and the next reset restores every writable place, so
    // /work need not be put back after the tests.
    const result = await this.testRun(false);
    const { output: _output, ...tests } = result;
    const count = (s: { passed: string[]; failed: string[] }): string => `${s.passed.length}/${s.passed.length + s.failed.length}`;
    const observation = `Submitted. FAIL_TO_PASS ${count(tests.failToPass)} passing, PASS_TO_PASS ${count(tests.passToPass)} passing: ${tests.success ? 'resolved' : 'not resolved'}.`;
    return this.end(observation, tests.score, { success: tests.success, score: tests.score, reason: 'submitted' }, { tests });
  }

  protected override async onClose(): Promise<void> {
    const sb = this.sandbox;
    this.sandbox = undefined;
    try {
      await sb?.destroy();
    } finally {
      const pool = this.pool;
      if (pool && this.ownsPool) await pool.close();
      else if (pool && this.poolRef) {
        this.poolRef = false;
        await pool.unref();
      }
    }
  }
}
