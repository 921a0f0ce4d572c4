import { z } from 'zod';
import { BaseEnv } from '../../core/base-env.js';
import { TaskError } from '../../core/errors.js';
import type { Action, Split, TaskInfo, TimeStep, ToolSpec } from '../../core/types.js';
import { resolveConfig, Sandbox, type SandboxConfig } from '../../sandbox/index.js';
import { sandboxTools } from '../sandbox/env.js';
import { dispatchTool, toolStepInfo } from '../sandbox/tools.js';
import { parseEnvKwargs } from '../shared/env-kwargs.js';
import { gradeScore, gradeStatusMap, runInstanceTests, testbedArchive, workPatch, type TestsStatus } from './harness.js';
import { ensureInstanceImage, SWE_BASE_TAG, type SweImageOptions } from './images.js';
import { loadInstances, selectInstances, type SweInstance } from './instances.js';
import { loadSpecs, specFor, type LoadedSpecs, type SpecTable, type SweSpec } from './specs.js';

/** The registered id of this environment. */
export const SWE_ENV_ID = 'gymflow/swe-v0';

/** Step limit applied by `make`. */
export const SWE_MAX_STEPS = 50;

/** Keyword arguments of {@link SweEnv} (`make('gymflow/swe-v0', { kwargs })`, `--env-kwargs`, a pipeline's `env_kwargs`). */
export const SweEnvOptionsSchema = z
  .object({
    /** SWE-bench instances: a JSON-lines file or a JSON array (relative paths from the working directory). */
    instances: z.string({ error: (i) => (i.input === undefined ? 'required: a SWE-bench instances file (JSON lines or a JSON array)' : 'expected a file path') }),
    /** A directory of the repositories (bare or not), `owner__name.git` and the like; else each is fetched from `repoUrl`. */
    repos: z.string().optional(),
    /** Git URL template for repositories not in `repos` (`{repo}` = owner/name; default GitHub's); `false`: never fetch. */
    repoUrl: z.union([z.string(), z.literal(false)]).optional(),
    /** The spec table (a YAML/JSON file, or the table itself); default: pytest with `-rA`, nothing installed. */
    specs: z.union([z.string(), z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown())))]).optional(),
    /** The image environment layers go on (default `gymflow/sandbox:latest`). */
    baseImage: z.string().optional(),
    /** The task split of instances that do not name one (default `heldout`: a benchmark is held out). */
    split: z.enum(['train', 'heldout']).default('heldout'),
    /** Only these instances. */
    instanceIds: z.array(z.string()).min(1).optional(),
    /** Sandbox config overrides (limits, hardening switches) of the episodes' containers. */
    sandbox: z.record(z.string(), z.unknown()).optional(),
    /** Time limit of the test run at submit, seconds (the harness's 1800 by default). */
    testTimeoutS: z.number().int().positive().default(1800),
    /** Time limit of one image layer's build script, seconds. */
    buildTimeoutS: z.number().int().positive().default(3600),
    /** Default and largest time limit of a `shell` call, seconds. */
    shellTimeoutS: z.number().int().positive().default(30),
    maxShellTimeoutS: z.number().int().positive().default(300),
    /** Show the instance's `hints_text` after the problem statement (SWE-bench's default is not to). */
    showHints: z.boolean().default(false),
  })
  .strict()
  .refine((o) => o.maxShellTimeoutS >= o.shellTimeoutS, { path: ['maxShellTimeoutS'], message: 'must be at least shellTimeoutS' });

/** Parsed options of {@link SweEnv}. */
export type SweEnvOptions = z.infer<typeof SweEnvOptionsSchema>;

/**
 * Instances loaded by any `gymflow/swe-v0` environment of this process, by id: what the gold-patch expert
 * ({@link SweExpert}) reads, since an agent is built without the environment's keyword arguments.
 */
const knownInstances = new Map<string, SweInstance>();

/** An instance some environment of this process loaded, or undefined. */
export function knownSweInstance(id: string): SweInstance | undefined {
  return knownInstances.get(id);
}

/** The public description of an instance: no patch, no test names. */
export function sweTaskInfo(i: SweInstance): TaskInfo {
  return {
    id: i.instanceId,
    domain: 'coding',
    instruction: i.problemStatement,
    split: i.split,
    metadata: { repo: i.repo, version: i.version, baseCommit: i.baseCommit, failToPass: i.failToPass.length, passToPass: i.passToPass.length },
  };
}

/**
 * `gymflow/swe-v0`: SWE-bench instances as episodes. `reset` starts the instance's repository at its base commit
 * (after the spec's install) in /work of a hardened sandbox of the instance's image — built on first use,
 * base → environment (repo/version) → instance; the agent works with the coding tools of `gymflow/sandbox-v0`;
 * `submit` grades the work as SWE-bench's harness does (test patch, the spec's test command, its log parser) and
 * ends the episode. Success: resolved (every FAIL_TO_PASS test passes, every PASS_TO_PASS test still does);
 * reward = score = (FAIL_TO_PASS passing / all) × (PASS_TO_PASS kept / all), 1 exactly when resolved. A step
 * limit truncates (`max_steps`).
 */
export class SweEnv extends BaseEnv {
  readonly domain = 'coding';
  readonly tools: readonly ToolSpec[] = sandboxTools();
  private readonly options: SweEnvOptions;
  private readonly instances: SweInstance[];
  private readonly specs: LoadedSpecs | undefined;
  private sandbox: Sandbox | undefined;
  private sandboxImage: string | undefined;
  private instance: SweInstance | undefined;
  private submittedPatch: string | undefined;

  constructor(kwargs: Record<string, unknown> = {}) {
    super();
    this.options = parseEnvKwargs(SWE_ENV_ID, SweEnvOptionsSchema, kwargs);
    resolveConfig((this.options.sandbox ?? {}) as Partial<SandboxConfig>);
    const instances = selectInstances(loadInstances(this.options.instances, { split: this.options.split }), this.options.instanceIds, `${SWE_ENV_ID} kwargs $.instanceIds`, this.options.instances);
    this.instances = instances;
    this.specs = this.options.specs === undefined ? undefined : loadSpecs(this.options.specs as string | SpecTable);
    // Every instance has a spec, or the environment is not made (not an error at some later reset).
    for (const i of instances) specFor(i, this.specs);
    for (const i of instances) knownInstances.set(i.instanceId, i);
  }

  /** The tasks of a split (both when omitted). */
  override listTasks(split?: Split): TaskInfo[] {
    return this.instances.filter((i) => split === undefined || i.split === split).map(sweTaskInfo);
  }

  /** The full instance (gold patch, test lists) — for experts and tests, never shown to the agent. */
  getInstance(id: string): SweInstance {
    const i = this.instances.find((x) => x.instanceId === id);
    if (!i) throw new TaskError(`no instance '${id}' in ${SWE_ENV_ID} (${this.options.instances}); known: ${this.instances.slice(0, 20).map((x) => x.instanceId).join(', ')}${this.instances.length > 20 ? ', …' : ''}`);
    return i;
  }

  /** The spec an instance is built and graded with. */
  specOf(instance: SweInstance): SweSpec {
    return specFor(instance, this.specs);
  }

  /** What the image builds need (sources of the repositories, base image, time limit). */
  get imageOptions(): SweImageOptions {
    const o = this.options;
    return { repos: o.repos, repoUrl: o.repoUrl, baseImage: o.baseImage, buildTimeoutS: o.buildTimeoutS };
  }

  /** The sandbox of the current episode (after `reset`). */
  get currentSandbox(): Sandbox | undefined {
    return this.sandbox;
  }

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    const train = this.instances.filter((i) => i.split === 'train');
    const instance = options.task === undefined ? this.rng.pick(train.length ? train : this.instances) : this.getInstance(options.task);
    this.instance = instance;
    this.submittedPatch = undefined;
    const images = await ensureInstanceImage(instance, this.specOf(instance), this.imageOptions);
    const ref = images.instance.ref;
    if (this.sandbox && this.sandboxImage !== ref) {
      // A container is of one image: another instance needs another container.
      await this.sandbox.destroy();
      this.sandbox = undefined;
    }
    this.sandbox ??= await Sandbox.create({ config: { ...((this.options.sandbox ?? {}) as Partial<SandboxConfig>), image: ref }, task: instance.instanceId });
    this.sandboxImage = ref;
    await this.sandbox.reset(await testbedArchive(this.sandbox, images.instance.id));
    const hints = this.options.showHints && instance.hintsText.trim() !== '' ? ['', 'Hints:', instance.hintsText.trim()] : [];
    const observation = [
      `Instance ${instance.instanceId} (${instance.repo}, version ${instance.version}). The repository is in /work, a git repository at base commit ${instance.baseCommit.slice(0, 12)} (tagged ${SWE_BASE_TAG}).`,
      '',
      'Resolve this issue:',
      '',
      instance.problemStatement.trim(),
      ...hints,
      '',
      'Edit the code with the tools; call submit when you are done: hidden tests decide the outcome.',
    ].join('\n');
    return this.first(observation, sweTaskInfo(instance));
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    const sb = this.sandbox as Sandbox;
    if (action.tool === 'submit') return this.submit();
    const o = await dispatchTool(sb, action, this.options);
    return this.observe(o.observation, 0, toolStepInfo(o));
  }

  /**
   * The episode's patch: what it submitted, or (before a submit) the diff of /work against the start
   * ({@link workPatch}). What `gymflow eval --benchmark swe-bench --agent` grades as the agent's prediction.
   */
  async episodePatch(): Promise<string> {
    if (this.submittedPatch !== undefined) return this.submittedPatch;
    if (!this.sandbox) throw new TaskError('episodePatch() before reset()');
    return workPatch(this.sandbox);
  }

  private async submit(): Promise<TimeStep> {
    const sb = this.sandbox as Sandbox;
    const instance = this.instance as SweInstance;
    const patch = await workPatch(sb).catch(() => '');
    this.submittedPatch = patch;
    const run = await runInstanceTests(sb, instance, this.specOf(instance), this.options.testTimeoutS);
    const graded = gradeStatusMap(run.statusMap, instance.failToPass, instance.passToPass);
    const resolved = graded.resolved && !run.timedOut;
    const score = run.timedOut ? 0 : gradeScore(graded.tests);
    const count = (l: TestsStatus['FAIL_TO_PASS']): string => `${l.success.length}/${l.success.length + l.failure.length}`;
    const observation = run.timedOut
      ? `Submitted. The tests ran past their time limit of ${this.options.testTimeoutS}s: not resolved.`
      : `Submitted. FAIL_TO_PASS ${count(graded.tests.FAIL_TO_PASS)} passing, PASS_TO_PASS ${count(graded.tests.PASS_TO_PASS)} passing: ${resolved ? 'resolved' : 'not resolved'}.`;
    return this.end(observation, score, { success: resolved, score, reason: 'submitted' }, { tests: graded.tests, resolved, timedOut: run.timedOut, testPatchApplied: run.testPatchApplied, patch });
  }

  protected override async onClose(): Promise<void> {
    const sb = this.sandbox;
    this.sandbox = undefined;
    await sb?.destroy();
  }
}
