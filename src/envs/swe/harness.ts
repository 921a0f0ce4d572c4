import type Docker from 'dockerode';
import { Sandbox, SandboxError, type SandboxConfig } from '../../sandbox/index.js';
import { diffFileKinds, diffFiles, type SweInstance } from './instances.js';
import { parseTestLog, type StatusMap } from './log-parsers.js';
import { ensureInstanceImage, shQuote, SWE_BASE_TAG, TESTBED_TAR, type SweImageOptions } from './images.js';
import type { SweSpec } from './specs.js';
import { defined } from '../../core/defined.js';

/** The harness's log markers (SWE-bench's constants). */
export const APPLY_PATCH_FAIL = '>>>>> Patch Apply Failed';
export const APPLY_PATCH_PASS = '>>>>> Applied Patch';
export const TESTS_TIMEOUT = '>>>>> Tests Timed Out';
export const START_TEST_OUTPUT = '>>>>> Start Test Output';
export const END_TEST_OUTPUT = '>>>>> End Test Output';

/** Extensions of files a test patch touches that are not tests to run (SWE-bench's `NON_TEST_EXTS`). */
const NON_TEST_EXTS = ['.json', '.png', 'csv', '.txt', '.md', '.jpg', '.jpeg', '.pkl', '.yml', '.yaml', '.toml'];

/**
 * What the test command is given (SWE-bench's `get_test_directives`): the files the test patch touches, less data
 * files; for `django`, as module names (`tests/` and `.py` dropped, `/` → `.`) of test files only; none for `none`.
 */
export function testDirectives(instance: Pick<SweInstance, 'testPatch'>, spec: Pick<SweSpec, 'test_directives'>): string[] {
  if (spec.test_directives === 'none') return [];
  const files = diffFiles(instance.testPatch).filter((d) => !NON_TEST_EXTS.some((ext) => d.endsWith(ext)));
  if (spec.test_directives === 'files') return files;
  return files
    .filter((d) => {
      const base = d.split('/').pop() ?? '';
      return base === 'tests.py' || base.startsWith('test_') || d.includes('/tests/') || d.includes('/test_');
    })
    .map((d) => (d.endsWith('.py') ? d.slice(0, -3) : d))
    .map((d) => (d.startsWith('tests/') ? d.slice('tests/'.length) : d).replaceAll('/', '.'));
}

/** The test command line: the spec's `test_cmd` followed by the test directives. */
export function testCommand(instance: Pick<SweInstance, 'testPatch'>, spec: Pick<SweSpec, 'test_cmd' | 'test_directives'>): string {
  return [spec.test_cmd, ...testDirectives(instance, spec).map(shQuote)].join(' ');
}

/** One list's outcome, as the harness's report writes it. */
export interface TestList {
  success: string[];
  failure: string[];
}

/** SWE-bench's `tests_status`. FAIL_TO_FAIL and PASS_TO_FAIL stay empty (the data set has no such lists). */
export interface TestsStatus {
  FAIL_TO_PASS: TestList;
  PASS_TO_PASS: TestList;
  FAIL_TO_FAIL: TestList;
  PASS_TO_FAIL: TestList;
}

/** One instance's entry in SWE-bench's per-instance `report.json` (`{ [instance_id]: InstanceReport }`). */
export interface InstanceReport {
  patch_is_None: boolean;
  patch_exists: boolean;
  patch_successfully_applied: boolean;
  resolved: boolean;
  tests_status?: TestsStatus;
}

/**
 * Grades a status map against an instance's lists, by SWE-bench's rules (`get_eval_tests_report`): a
 * FAIL_TO_PASS test succeeds when PASSED or XFAIL and fails otherwise — FAILED, ERROR, SKIPPED or missing from
 * the log; a PASS_TO_PASS test is kept when PASSED, XFAIL or SKIPPED, and fails when FAILED, ERROR or missing.
 * Resolved: every FAIL_TO_PASS test succeeds and every PASS_TO_PASS test is kept.
 */
export function gradeStatusMap(statusMap: StatusMap, failToPass: readonly string[], passToPass: readonly string[]): { resolved: boolean; tests: TestsStatus } {
  const passed = (t: string): boolean => statusMap.get(t) === 'PASSED' || statusMap.get(t) === 'XFAIL';
  const f2p: TestList = { success: [], failure: [] };
  for (const t of failToPass) (passed(t) ? f2p.success : f2p.failure).push(t);
  const p2p: TestList = { success: [], failure: [] };
  for (const t of passToPass) (passed(t) || statusMap.get(t) === 'SKIPPED' ? p2p.success : p2p.failure).push(t);
  const empty = (): TestList => ({ success: [], failure: [] });
  return { resolved: f2p.failure.length === 0 && p2p.failure.length === 0, tests: { FAIL_TO_PASS: f2p, PASS_TO_PASS: p2p, FAIL_TO_FAIL: empty(), PASS_TO_FAIL: empty() } };
}

/** Partial credit of a grade: (FAIL_TO_PASS succeeding / all) × (PASS_TO_PASS kept / all), a factor 1 for an empty list. */
export function gradeScore(tests: TestsStatus): number {
  const frac = (l: TestList): number => (l.success.length + l.failure.length === 0 ? 1 : l.success.length / (l.success.length + l.failure.length));
  return frac(tests.FAIL_TO_PASS) * frac(tests.PASS_TO_PASS);
}

/** What one run of an instance's tests produced. */
export interface TestRun {
  /** The whole log: test patch, the tests' output between the markers, the reset. */
  log: string;
  statusMap: StatusMap;
  /** The test command ran past its time limit (then the status map is empty, as in the harness). */
  timedOut: boolean;
  testPatchApplied: boolean;
  durationMs: number;
}

/** The evaluation script (SWE-bench's `make_eval_script_list`); the test patch comes on stdin. No `set -e`: every step runs. */
export function evalScript(instance: SweInstance, spec: SweSpec): string {
  const { created, existing } = diffFileKinds(instance.testPatch);
  const reset = [
    ...(existing.length ? [`git checkout -q ${instance.baseCommit} -- ${existing.map(shQuote).join(' ')}`] : []),
    ...(created.length ? [`rm -f -- ${created.map(shQuote).join(' ')}`] : []),
  ];
  return [
    'set -uo pipefail',
    'cd /work',
    'T=$(mktemp) && cat > "$T"',
    ...spec.eval_commands,
    'cd /work',
    ...reset,
    'if git apply -v "$T"; then echo ">>>>> Applied Test Patch"; else echo ">>>>> Test Patch Apply Failed"; fi',
    'rm -f "$T"',
    `echo ${shQuote(START_TEST_OUTPUT)}`,
    testCommand(instance, spec),
    `echo ${shQuote(END_TEST_OUTPUT)}`,
    ...reset,
  ].join('\n');
}

/**
 * Runs an instance's tests in a sandbox whose /work holds the candidate state (a patch applied, or an agent's
 * work): the test files go back to the base commit and the test patch is applied, the spec's `eval_commands` and
 * test command run, and the test files are put back afterwards. The status map comes from the spec's log parser
 * over the output between the markers (the whole log when that finds nothing).
 */
export async function runInstanceTests(sb: Sandbox, instance: SweInstance, spec: SweSpec, timeoutS: number): Promise<TestRun> {
  const started = performance.now();
  const r = await sb.exec(['bash', '-c', `exec 2>&1\n${evalScript(instance, spec)}`], { stdin: Buffer.from(instance.testPatch), rawStdout: true, timeoutS, outputCapBytes: 64 * 1024 });
  const log = (r.stdout ?? Buffer.alloc(0)).toString('utf8') + r.output;
  const durationMs = performance.now() - started;
  const testPatchApplied = log.includes('>>>>> Applied Test Patch');
  if (r.timedOut) return { log: `${log}\n${TESTS_TIMEOUT}: after ${timeoutS}s`, statusMap: new Map(), timedOut: true, testPatchApplied, durationMs };
  const start = log.indexOf(START_TEST_OUTPUT);
  const end = log.indexOf(END_TEST_OUTPUT, start);
  const between = start >= 0 && end > start ? log.slice(start + START_TEST_OUTPUT.length, end) : '';
  let statusMap = parseTestLog(spec.log_parser, between);
  if (statusMap.size === 0) statusMap = parseTestLog(spec.log_parser, log);
  return { log, statusMap, timedOut: false, testPatchApplied, durationMs };
}

/**
 * Applies a model patch in /work as the harness does: `git apply -v`, else `patch --batch --fuzz=5 -p1`. A patch
 * without a final newline gets one (a diff cut there is otherwise "corrupt" to git). Returns whether it applied
 * and what the commands printed.
 */
export async function applyModelPatch(sb: Sandbox, patch: string): Promise<{ applied: boolean; log: string }> {
  const text = patch.endsWith('\n') ? patch : `${patch}\n`;
  const script = [
    'T=$(mktemp) && cat > "$T" || exit 3',
    `if git apply -v "$T"; then echo ${shQuote(APPLY_PATCH_PASS)}; rm -f "$T"; exit 0; fi`,
    `if patch --batch --fuzz=5 -p1 -i "$T"; then echo ${shQuote(APPLY_PATCH_PASS)}; rm -f "$T"; exit 0; fi`,
    `echo ${shQuote(APPLY_PATCH_FAIL)}; rm -f "$T"; exit 1`,
  ].join('\n');
  const r = await sb.exec(['bash', '-c', `exec 2>&1\n${script}`], { stdin: Buffer.from(text), timeoutS: 120, outputCapBytes: 64 * 1024 });
  return { applied: r.exitCode === 0, log: r.output };
}

/**
 * The agent's changes in /work as a patch against the episode's start ({@link SWE_BASE_TAG}): tracked and new
 * files (a temporary index, so the agent's own index is untouched), binary changes included, ignored files not.
 */
export async function workPatch(sb: Sandbox): Promise<string> {
  const script = `T=$(mktemp) || exit 3
cp .git/index "$T" 2>/dev/null
GIT_INDEX_FILE="$T" git add -A . && GIT_INDEX_FILE="$T" git -c core.fileMode=false diff --cached --binary ${SWE_BASE_TAG}
rc=$?; rm -f "$T"; exit $rc`;
  const r = await sb.exec(['bash', '-c', script], { rawStdout: true, timeoutS: 120 });
  if (r.exitCode !== 0) throw new SandboxError(`reading the work's diff against ${SWE_BASE_TAG} failed (exit ${r.exitCode}): ${r.output.trim()}`);
  return (r.stdout ?? Buffer.alloc(0)).toString('utf8');
}

const testbeds = new Map<string, Promise<Buffer>>();

/**
 * The repository state an instance's episodes start from: the instance image's {@link TESTBED_TAR}, read once per
 * image and process through `sb` (a sandbox of that image).
 */
export function testbedArchive(sb: Sandbox, imageId: string): Promise<Buffer> {
  let p = testbeds.get(imageId);
  if (!p) {
    p = sb.exec(['cat', TESTBED_TAR], { rawStdout: true, timeoutS: 300 }).then((r) => {
      if (r.exitCode !== 0 || r.stdout === undefined) throw new SandboxError(`image ${imageId}: cannot read ${TESTBED_TAR} (exit ${r.exitCode}): ${r.output.trim()}`);
      return r.stdout;
    });
    testbeds.set(imageId, p);
    p.catch(() => testbeds.delete(imageId));
  }
  return p;
}

/** A prediction in SWE-bench's format. */
export interface Prediction {
  instance_id: string;
  model_name_or_path: string;
  /** The patch; `null` or `''` is an empty patch. */
  model_patch: string | null;
}

/** How one prediction was graded. */
export interface GradedInstance {
  instanceId: string;
  /** `empty_patch`: not run; `error`: the patch did not apply, or the image or sandbox failed. */
  outcome: 'resolved' | 'unresolved' | 'error' | 'empty_patch';
  report: InstanceReport;
  /** Why it is an error. */
  error?: string;
  /** The patch application's and the test run's output. */
  log: string;
  /** Time to get the instance image (building or finding it), and to grade in the sandbox, milliseconds. */
  imageMs: number;
  gradeMs: number;
  /** The image was built for this grading (not there before). */
  imageBuilt: boolean;
}

/** Options of {@link gradePrediction}. */
export interface GradeOptions extends SweImageOptions {
  /** Time limit of the test command, seconds (default 1800, the harness's). */
  timeoutS?: number | undefined;
  /** Sandbox config overrides (limits, hardening). */
  sandbox?: Partial<SandboxConfig> | undefined;
  docker?: Docker | undefined;
}

/**
 * Grades one prediction as SWE-bench's harness does, in a fresh hardened sandbox of the instance's image (built
 * when missing): the repository at the base commit, the model patch applied, the test patch applied, the spec's
 * test command run, its log parsed, FAIL_TO_PASS and PASS_TO_PASS checked ({@link gradeStatusMap}). An empty
 * patch is not run; a patch that does not apply is an error; a test run past the time limit is unresolved.
 */
export async function gradePrediction(instance: SweInstance, spec: SweSpec, prediction: Prediction, o: GradeOptions = {}): Promise<GradedInstance> {
  const base: InstanceReport = { patch_is_None: prediction.model_patch === null, patch_exists: false, patch_successfully_applied: false, resolved: false };
  const id = instance.instanceId;
  if (prediction.model_patch === null || prediction.model_patch === '') return { instanceId: id, outcome: 'empty_patch', report: base, log: '', imageMs: 0, gradeMs: 0, imageBuilt: false };
  const report: InstanceReport = { ...base, patch_exists: true };
  const t0 = performance.now();
  let image;
  try {
    image = await ensureInstanceImage(instance, spec, o);
  } catch (err) {
    return { instanceId: id, outcome: 'error', report, error: `image: ${(err as Error).message}`, log: '', imageMs: performance.now() - t0, gradeMs: 0, imageBuilt: false };
  }
  const imageMs = performance.now() - t0;
  const t1 = performance.now();
  let sb: Sandbox | undefined;
  let log = '';
  try {
    sb = await Sandbox.create({ config: { ...(o.sandbox ?? {}), image: image.instance.ref }, task: id, ...defined({ docker: o.docker }) });
    await sb.reset(await testbedArchive(sb, image.instance.id));
    const applied = await applyModelPatch(sb, prediction.model_patch);
    log = applied.log;
    if (!applied.applied) return { instanceId: id, outcome: 'error', report, error: 'the model patch does not apply', log, imageMs, gradeMs: performance.now() - t1, imageBuilt: image.instance.built };
    const run = await runInstanceTests(sb, instance, spec, o.timeoutS ?? 1800);
    log += `\n${run.log}`;
    if (run.timedOut) return { instanceId: id, outcome: 'unresolved', report, log, imageMs, gradeMs: performance.now() - t1, imageBuilt: image.instance.built };
    const graded = gradeStatusMap(run.statusMap, instance.failToPass, instance.passToPass);
    const full: InstanceReport = { ...report, patch_successfully_applied: true, resolved: graded.resolved, tests_status: graded.tests };
    return { instanceId: id, outcome: graded.resolved ? 'resolved' : 'unresolved', report: full, log, imageMs, gradeMs: performance.now() - t1, imageBuilt: image.instance.built };
  } catch (err) {
    return { instanceId: id, outcome: 'error', report, error: `sandbox: ${(err as Error).message}`, log, imageMs, gradeMs: performance.now() - t1, imageBuilt: image.instance.built };
  } finally {
    await sb?.destroy().catch(() => undefined);
  }
}
