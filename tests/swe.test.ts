/**
 * `gymflow/swe-v0` and `gymflow eval --benchmark swe-bench` end to end on a real Docker engine: six SWE-bench
 * instances made in the test from two small git repositories with real histories (src/envs/swe/__fixtures__),
 * their images built once for the file (three environment layers, six instance layers, on the sandbox base image)
 * and removed at the end.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect } from 'vitest';
import type { z } from 'zod';
import { createRolloutActivities, type EvalSummary, type EvaluatePolicyInputSchema } from '../activities/rollouts.js';
import { createSetupActivities } from '../activities/setup.js';
import { runCommand } from '../src/cli/commands/__fixtures__/run-command.js';
import { evalCommand } from '../src/cli/commands/eval.js';
import { sweCommand } from '../src/cli/commands/swe.js';
import { checkEnv } from '../src/core/check-env.js';
import { getProfile } from '../src/core/profiles/index.js';
import { make } from '../src/core/registry.js';
import { runEpisode } from '../src/core/rollout.js';
import type { AgentEnv } from '../src/core/types.js';
import { Wrapper } from '../src/core/wrappers/wrapper.js';
import { registerBuiltinEnvs } from '../src/envs/register.js';
import { buildSweFixture, type SweFixture } from '../src/envs/swe/__fixtures__/swe-fixture.js';
import { gradePredictions, type RunReport } from '../src/envs/swe/benchmark.js';
import { SWE_ENV_ID, SweEnv } from '../src/envs/swe/env.js';
import { SweExpert } from '../src/envs/swe/expert.js';
import { runInstanceTests, testbedArchive, type Prediction } from '../src/envs/swe/harness.js';
import { ensureInstanceImage, listSweImages, pruneSweImages, type SweImage } from '../src/envs/swe/images.js';
import { loadInstances, type SweInstance } from '../src/envs/swe/instances.js';
import { loadSpecs, specFor, type LoadedSpecs } from '../src/envs/swe/specs.js';
import { DEFAULT_IMAGE, inspectImage, Sandbox } from '../src/sandbox/index.js';
import type { PipelineConfig } from '../src/loop/config.js';
import { requires } from './support/requires.js';

type EvaluatePolicyInput = z.input<typeof EvaluatePolicyInputSchema>;

const docker = requires.docker();

docker.describe('gymflow/swe-v0 and the SWE-bench harness on real repositories', () => {
  const nonce = randomBytes(4).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'gymflow-swe-test-'));
  let fx: SweFixture;
  let instances: SweInstance[];
  let specs: LoadedSpecs;
  const images = new Map<string, { env: SweImage; instance: SweImage }>();
  const source = (): { repos: string; repoUrl: false } => ({ repos: fx.reposDir, repoUrl: false });
  const byId = (id: string): SweInstance => instances.find((i) => i.instanceId === id) as SweInstance;
  const kwargs = (over: Record<string, unknown> = {}): Record<string, unknown> => ({ instances: fx.instancesFile, repos: fx.reposDir, repoUrl: false, specs: fx.specsFile, testTimeoutS: 120, ...over });
  const gold = (i: SweInstance): Prediction => ({ instance_id: i.instanceId, model_name_or_path: 'gold', model_patch: i.patch });

  beforeAll(async () => {
    registerBuiltinEnvs();
    fx = buildSweFixture(dir, nonce);
    instances = loadInstances(fx.instancesFile);
    specs = loadSpecs(fx.specsFile);
    // Every image once for the whole file (the nonce in the specs makes them new).
    for (const i of instances) images.set(i.instanceId, await ensureInstanceImage(i, specFor(i, specs), source()));
  });

  afterAll(async () => {
    const ours = new Set([...images.values()].flatMap((i) => [i.env.ref, i.instance.ref]));
    await pruneSweImages({ filter: (r) => ours.has(r.ref) });
    rmSync(dir, { recursive: true, force: true });
  });

  docker.it('layers the images base → environment (repo/version) → instance, shared per repo/version, and finds them the second time', async () => {
    const envs = new Set([...images.values()].map((i) => i.env.ref));
    expect(envs.size).toBe(3); // acme/calc 1.0 and 2.0, acme/words 0.1
    expect(images.get('acme__calc-1')?.env.ref).toBe(images.get('acme__calc-4')?.env.ref);
    expect(images.get('acme__calc-1')?.env.ref).not.toBe(images.get('acme__calc-3')?.env.ref);
    expect([...images.values()].every((i) => i.instance.built)).toBe(true);
    const base = await inspectImage(DEFAULT_IMAGE);
    for (const [id, img] of images) {
      const inst = await inspectImage(img.instance.ref);
      const env = await inspectImage(img.env.ref);
      // One layer each: the instance image shares every layer but its last with its environment image.
      expect(env?.RootFS?.Layers?.slice(0, -1), id).toEqual(base?.RootFS?.Layers);
      expect(inst?.RootFS?.Layers?.slice(0, -1), id).toEqual(env?.RootFS?.Layers);
      expect(inst?.Parent).toBe(env?.Id);
      // The base image's user, working directory and command, not the build's.
      expect(inst?.Config.User).toBe('agent');
      expect(inst?.Config.Cmd).toEqual(['sleep', 'infinity']);
    }
    const again = await ensureInstanceImage(byId('acme__calc-2'), specFor(byId('acme__calc-2'), specs), source());
    expect([again.env.built, again.instance.built]).toEqual([false, false]);
    const listed = await listSweImages();
    expect(listed.filter((r) => envs.has(r.ref)).map((r) => r.kind)).toEqual(['env', 'env', 'env']);
    expect(listed.find((r) => r.ref === images.get('acme__words-2')?.instance.ref)).toMatchObject({ kind: 'instance', repo: 'acme/words', version: '0.1', instance: 'acme__words-2' });
  });

  docker.it('runs the tests at the base commit: FAIL_TO_PASS tests fail (parametrised ids), and some error rather than fail', async () => {
    const status = async (id: string): Promise<Record<string, string>> => {
      const inst = byId(id);
      const img = images.get(id)?.instance as SweImage;
      const sb = await Sandbox.create({ config: { image: img.ref } });
      try {
        await sb.reset(await testbedArchive(sb, img.id));
        // The repository is at the base commit with its history and nothing after it (but the image's setup commit).
        const after = await sb.shell(`git rev-list --all --format=%s ^${inst.baseCommit} | grep -v '^commit '`);
        expect(['', 'gymflow: environment setup']).toContain(after.output.trim());
        expect((await sb.shell(`git merge-base --is-ancestor ${inst.baseCommit} HEAD`)).exitCode).toBe(0);
        expect((await sb.shell('git status --porcelain')).output.trim()).toBe('');
        return Object.fromEntries((await runInstanceTests(sb, inst, specFor(inst, specs), 120)).statusMap);
      } finally {
        await sb.destroy();
      }
    };
    expect(await status('acme__calc-1')).toMatchObject({ 'tests/test_ops.py::test_div[7-2-3.5]': 'FAILED', 'tests/test_ops.py::test_div[1-4-0.25]': 'FAILED', 'tests/test_ops.py::test_add[1-2-3]': 'PASSED' });
    // A fixture that raises: pytest reports ERROR, not FAILED.
    expect(await status('acme__calc-2')).toMatchObject({ 'tests/test_parse.py::test_parse_int': 'ERROR', 'tests/test_parse.py::test_parse_sum': 'ERROR' });
    expect(await status('acme__words-2')).toMatchObject({ 'test_initials (tests.test_words.WordsTest.test_initials)': 'ERROR', 'test_count (tests.test_words.WordsTest.test_count)': 'PASSED' });
  });

  docker.it('grades like the harness: the gold patches resolve; an empty patch, a patch that breaks a PASS_TO_PASS test and one that does not apply do not', async () => {
    const all = await gradePredictions({ instances, predictions: instances.map(gold), specs, ...source(), timeoutS: 120, concurrency: 2 });
    expect(all.report.resolved_ids).toEqual(instances.map((i) => i.instanceId).sort());
    expect(all.graded.every((g) => g.report.patch_successfully_applied && g.report.tests_status?.FAIL_TO_PASS.failure.length === 0)).toBe(true);

    const predictions: Prediction[] = [
      { instance_id: 'acme__calc-1', model_name_or_path: 'm', model_patch: fx.patches.breaksPassToPass['acme__calc-1'] as string },
      { instance_id: 'acme__calc-4', model_name_or_path: 'm', model_patch: fx.patches.breaksPassToPass['acme__calc-4'] as string },
      { instance_id: 'acme__calc-2', model_name_or_path: 'm', model_patch: fx.patches.doesNotApply['acme__calc-2'] as string },
      { instance_id: 'acme__words-1', model_name_or_path: 'm', model_patch: '' },
      { instance_id: 'acme__calc-3', model_name_or_path: 'm', model_patch: null },
    ];
    const mixed = await gradePredictions({ instances, predictions, specs, ...source(), timeoutS: 120 });
    expect(mixed.report).toMatchObject({
      total_instances: 6,
      submitted_instances: 5,
      completed_ids: ['acme__calc-1', 'acme__calc-4'],
      resolved_ids: [],
      unresolved_ids: ['acme__calc-1', 'acme__calc-4'],
      error_ids: ['acme__calc-2'],
      empty_patch_ids: ['acme__calc-3', 'acme__words-1'],
      incomplete_ids: ['acme__words-2'],
    });
    const g = (id: string): (typeof mixed.graded)[number] => mixed.graded.find((x) => x.instanceId === id) as (typeof mixed.graded)[number];
    // The fix works (FAIL_TO_PASS pass) but the tests that passed before break.
    expect(g('acme__calc-1').report.tests_status?.FAIL_TO_PASS.failure).toEqual([]);
    expect(g('acme__calc-1').report.tests_status?.PASS_TO_PASS.failure).toEqual(['tests/test_ops.py::test_add[1-2-3]', 'tests/test_ops.py::test_add[-1-1-0]']);
    expect(g('acme__calc-4').report.tests_status?.PASS_TO_PASS.failure).toEqual(['tests/test_clamp.py::test_clamp_low']);
    expect(g('acme__calc-2')).toMatchObject({ outcome: 'error', error: 'the model patch does not apply', report: { patch_exists: true, patch_successfully_applied: false, resolved: false } });
    expect(g('acme__calc-2').log).toContain('>>>>> Patch Apply Failed');
    expect(g('acme__calc-3').report).toEqual({ patch_is_None: true, patch_exists: false, patch_successfully_applied: false, resolved: false });
  });

  docker.it("runs episodes from make('gymflow/swe-v0', kwargs): the expert resolves, submitting nothing does not", async () => {
    const env = make(SWE_ENV_ID, { kwargs: kwargs() });
    try {
      expect(env.listTasks?.('heldout').map((t) => t.id)).toEqual(instances.map((i) => i.instanceId));
      const expert = await runEpisode(env, new SweExpert(), { envId: SWE_ENV_ID, task: 'acme__calc-3', seed: 0 });
      expect(expert.outcome).toMatchObject({ success: true, score: 1, terminated: true, reason: 'submitted' });
      expect(expert.steps[0]?.observation).toBeDefined();
      const inner = (env as Wrapper).unwrapped as SweEnv;
      // The prediction an agent made: the fix, without the expert's patch file or the image's setup.
      const patch = await inner.episodePatch();
      expect(patch).toContain('+    sign = "-" if x < 0 else ""');
      expect(patch).not.toContain('.gymflow-reference.patch');

      let ts = await env.reset({ task: 'acme__calc-1', seed: 1 });
      expect(ts.observation).toContain('ops.div(7, 2) returns 3');
      expect(ts.info.task).toMatchObject({ id: 'acme__calc-1', domain: 'coding', metadata: { repo: 'acme/calc', version: '1.0', failToPass: 2, passToPass: 3 } });
      // The setup commit of the image (pre_install changed setup.cfg) is not the agent's change.
      ts = await env.step({ tool: 'git', params: { subcommand: 'status', args: ['--short'] } });
      expect(ts.observation).toBe('(no output)\n[exit code 0]');
      expect(await inner.episodePatch()).toBe('');
      ts = await env.step({ tool: 'submit', params: {} });
      expect(ts).toMatchObject({ terminated: true, reward: 0, info: { success: false, score: 0, resolved: false, patch: '' } });
      expect(ts.observation).toBe('Submitted. FAIL_TO_PASS 0/2 passing, PASS_TO_PASS 3/3 passing: not resolved.');
    } finally {
      await env.close();
    }
  });

  docker.it('passes checkEnv and offers the coding profile\'s tools', async () => {
    const report = await checkEnv(() => make(SWE_ENV_ID, { kwargs: kwargs({ instanceIds: ['acme__words-1'] }) }), { seed: 0 });
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    const env: AgentEnv = make(SWE_ENV_ID, { kwargs: kwargs() });
    const byName = (tools: readonly { name: string; category: string }[]): Record<string, string> => Object.fromEntries(tools.map((t) => [t.name, t.category]));
    expect(byName(env.tools)).toEqual(byName(getProfile('coding').tools));
    await env.close();
  });

  docker.it('gymflow eval --benchmark swe-bench grades a predictions file into the report shape, and runs an agent the same way', async () => {
    const preds = join(dir, 'preds.jsonl');
    const list: Prediction[] = instances.map((i) =>
      i.instanceId === 'acme__calc-4' ? { ...gold(i), model_patch: fx.patches.breaksPassToPass['acme__calc-4'] as string } : i.instanceId === 'acme__calc-2' ? { ...gold(i), model_patch: fx.patches.doesNotApply['acme__calc-2'] as string } : i.instanceId === 'acme__words-2' ? { ...gold(i), model_patch: '' } : gold(i),
    );
    writeFileSync(preds, list.map((p) => JSON.stringify(p)).join('\n'));
    const out = join(dir, 'report.json');
    const logs = join(dir, 'logs');
    const base = ['eval', '--benchmark', 'swe-bench', '--instances', fx.instancesFile, '--repos', fx.reposDir, '--repo-url', 'none', '--specs', fx.specsFile, '--timeout', '120', '--concurrency', '2'];
    const text = await runCommand([evalCommand], ...base, '--predictions', preds, '--out', out, '--log-dir', logs);
    expect(text).toContain('swe-bench (gold): 6 instances, 6 submitted, 4 completed: 3 resolved, 1 unresolved, 1 empty patches, 1 errors');
    const report = JSON.parse(readFileSync(out, 'utf8')) as RunReport;
    expect(Object.keys(report)).toEqual(['total_instances', 'submitted_instances', 'completed_instances', 'resolved_instances', 'unresolved_instances', 'empty_patch_instances', 'error_instances', 'completed_ids', 'incomplete_ids', 'empty_patch_ids', 'submitted_ids', 'resolved_ids', 'unresolved_ids', 'error_ids', 'schema_version']);
    expect(report).toMatchObject({ resolved_ids: ['acme__calc-1', 'acme__calc-3', 'acme__words-1'], unresolved_ids: ['acme__calc-4'], error_ids: ['acme__calc-2'], empty_patch_ids: ['acme__words-2'], schema_version: 2 });
    const instReport = JSON.parse(readFileSync(join(logs, 'gold', 'acme__calc-4', 'report.json'), 'utf8')) as Record<string, { resolved: boolean; tests_status: unknown }>;
    expect(instReport['acme__calc-4']).toMatchObject({ patch_successfully_applied: true, resolved: false, tests_status: { PASS_TO_PASS: { failure: ['tests/test_clamp.py::test_clamp_low'] } } });
    expect(readFileSync(join(logs, 'gold', 'acme__calc-4', 'test_output.txt'), 'utf8')).toContain('>>>>> Start Test Output');
    expect(existsSync(join(logs, 'gold', 'acme__calc-1', 'patch.diff'))).toBe(true);

    const saved = join(dir, 'agent-preds.jsonl');
    const agent = JSON.parse(await runCommand([evalCommand], ...base, '--agent', 'expert', '--instance-ids', 'acme__words-1,acme__calc-2', '--save-predictions', saved, '--json')) as RunReport;
    expect(agent).toMatchObject({ total_instances: 2, resolved_ids: ['acme__calc-2', 'acme__words-1'], error_ids: [] });
    expect(readFileSync(saved, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as Prediction).model_name_or_path)).toEqual(['expert', 'expert']);

    await expect(runCommand([evalCommand], ...base, '--predictions', preds, '--agent', 'expert')).rejects.toThrow('exactly one of --predictions FILE');
    await expect(runCommand([evalCommand], 'eval', '--benchmark', 'swe-bench', '--predictions', preds)).rejects.toThrow('needs --instances FILE');
    await expect(runCommand([evalCommand], 'eval', '--benchmark', 'swe-lite')).rejects.toThrow("expected one of swe-bench, got 'swe-lite'");
    await expect(runCommand([evalCommand], ...base, '--predictions', preds, '--sandbox', '{"memMiB": 4096}')).rejects.toThrow("--sandbox: sandbox config: unknown key 'memMiB'");
    const listed = JSON.parse(await runCommand([sweCommand], 'swe', 'images', '--json')) as { ref: string }[];
    expect(listed.map((r) => r.ref)).toEqual(expect.arrayContaining([...images.values()].map((i) => i.instance.ref)));
  });

  docker.it("is a pipeline's environment through env_kwargs: checkConfig accepts it (and names a bad one), evaluatePolicy runs the eval stage", async () => {
    const root = mkdtempSync(join(tmpdir(), 'gymflow-swe-pipeline-'));
    try {
      const where = { store: join(root, 'store'), work_dir: join(root, 'work') };
      const config = {
        name: 'swe-eval',
        env: SWE_ENV_ID,
        // Training episodes from the same instances as the train split; evaluation on them held out.
        env_kwargs: kwargs({ split: 'train' }),
        policy: { init: { tiny: {} } },
        train: { command: 'sft' },
        max_iterations: 1,
        collect: { agent: 'expert' },
        eval: { agent: 'expert', tasks: 2, env_kwargs: kwargs() },
        ...where,
      };
      const setup = createSetupActivities({ store: where.store, workDir: where.work_dir });
      const checked: PipelineConfig = await new MockActivityEnvironment().run<[unknown], PipelineConfig, typeof setup.checkConfig>(setup.checkConfig, config);
      expect(checked.eval.env_kwargs).toMatchObject({ instances: fx.instancesFile });
      const failure = await new MockActivityEnvironment().run(setup.checkConfig, { ...config, eval: { ...config.eval, env_kwargs: { repos: fx.reposDir } } }).catch((e: unknown) => e);
      expect(String(failure)).toContain('pipeline config $.eval.env_kwargs: gymflow/swe-v0 kwargs $.instances: required');

      const rollouts = createRolloutActivities({});
      const input = {
        envId: SWE_ENV_ID,
        policy: { checkpointRef: `sha256:${'ab'.repeat(32)}`, iteration: 1 },
        eval: { agent: 'expert', split: 'heldout', tasks: 2, repeats: 1, seed: 0, concurrency: 2, temperature: 0, env_kwargs: kwargs() },
        store: where.store,
        workDir: where.work_dir,
      } as const;
      const summary = await new MockActivityEnvironment().run<[EvaluatePolicyInput], EvalSummary, typeof rollouts.evaluatePolicy>(rollouts.evaluatePolicy, input as unknown as EvaluatePolicyInput);
      expect(summary.success).toMatchObject({ value: 1, n: 2 });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
