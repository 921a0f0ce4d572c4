/**
 * The pipeline's Reward stage with every layer, on a real Temporal dev server with the real workers and trainer,
 * the judge talking through the real SDK clients to loopback Anthropic and OpenAI-compatible servers: one that
 * fails a share of its calls and rate-limits others (`retry-after`), one that rate-limits every other call under a
 * call budget, and one that refuses the key; and the learned layer, a reward model the trainer fits to a run's
 * scored rollouts and exports to ONNX.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { ArtifactStore } from '../src/hub/store/store.js';
import { loadTrajectories } from '../src/hub/store/trajectory-set.js';
import { parsePipelineConfig, type PipelineConfig } from '../src/loop/config.js';
import { SEARCH_ATTRIBUTES } from '../src/loop/search-attributes.js';
import { fitIsotonic } from '../src/reward/calibration/isotonic.js';
import { anthropicError, anthropicToolUse, LoopbackApi, openaiCompletion, openaiError, verdict, type RecordedRequest } from '../src/reward/judge/__fixtures__/loopback-api.js';
import { runWorker as runCpuWorker } from '../workers/cpu.js';
import { runWorker as runGpuWorker } from '../workers/gpu.js';
import { pipeline, pipelineStatusQuery } from '../workflows/index.js';
import { requires } from './support/requires.js';
import { startLocalTemporal, type LocalTemporal } from './support/temporal.js';

const temporal = requires.temporal();
const python = requires.python(['torch', 'transformers', 'onnx', 'onnxruntime', 'gymflow_trainer']);

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed
}

const TINY = { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, max_position_embeddings: 4096 };

/** The rubric names a judge request asks for (Anthropic: the tool's schema; OpenAI: the response format's). */
function askedRubrics(r: RecordedRequest): string[] {
  const b = r.body as { tools?: { input_schema: { required: string[] } }[]; response_format?: { json_schema?: { schema: { required: string[] } } } };
  return b.tools?.[0]?.input_schema.required ?? b.response_format?.json_schema?.schema.required ?? [];
}

/** The hash of a request's prompt (its first user message). */
function promptHash(r: RecordedRequest): string {
  const b = r.body as { messages: { role: string; content: unknown }[] };
  return createHash('sha256').update(JSON.stringify(b.messages.find((m) => m.role === 'user')?.content)).digest('hex');
}

temporal.describe('the reward stage on Temporal', () => {
  python.describe('with the trainer', () => {
    let local: LocalTemporal | undefined;
    let dir = '';
    const cpuQueue = `gymflow-${randomUUID()}`;
    const gpuQueue = `gymflow-gpu-${randomUUID()}`;
    const stopWorkers = new AbortController();
    let workers: Promise<unknown> | undefined;
    const keys = { ANTHROPIC_API_KEY: process.env['ANTHROPIC_API_KEY'], OPENAI_API_KEY: process.env['OPENAI_API_KEY'] };

    beforeAll(async () => {
      // The in-process workers read the judge's key from this process's environment, as real workers do.
      process.env['ANTHROPIC_API_KEY'] = 'test-key';
      process.env['OPENAI_API_KEY'] = 'test-key';
      dir = await mkdtemp(path.join(tmpdir(), 'gymflow-pipeline-reward-'));
      local = await startLocalTemporal({ dbFilename: path.join(dir, 'temporal.db'), searchAttributes: SEARCH_ATTRIBUTES });
      const env = local.env;
      const common = { connection: env.nativeConnection, namespace: env.namespace ?? 'default', signal: stopWorkers.signal, store: path.join(dir, 'store'), workDir: path.join(dir, 'work'), log: () => undefined };
      workers = Promise.all([runCpuWorker({ ...common, taskQueue: cpuQueue }), runGpuWorker({ ...common, taskQueue: gpuQueue, killGraceMs: 3000 })]);
      workers.catch(() => undefined);
    });

    afterAll(async () => {
      stopWorkers.abort();
      await workers?.catch(() => undefined);
      await local?.teardown();
      if (dir) await rm(dir, { recursive: true, force: true });
      for (const [k, v] of Object.entries(keys)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });

    function config(reward: Record<string, unknown>): PipelineConfig {
      return parsePipelineConfig(
        {
          name: `t-${randomUUID().slice(0, 8)}`,
          env: 'gymflow/tool-use-v0',
          task_queues: { cpu: cpuQueue, gpu: gpuQueue },
          policy: { init: { tiny: TINY } },
          collect: { agent: 'expert', tasks: 2, shard_size: 1 },
          train: { command: 'sft', config: { max_steps: 1, max_length: 256 } },
          eval: { agent: 'expert', tasks: 1, baseline: false },
          reward,
          max_iterations: 1,
        },
        'test',
      );
    }

    async function run(c: PipelineConfig) {
      if (!local) throw new Error('no test environment');
      const handle = await local.env.client.workflow.start(pipeline, { taskQueue: cpuQueue, workflowId: `${c.name}-${randomUUID()}`, args: [c] });
      const result = await handle.result();
      const status = await handle.query(pipelineStatusQuery);
      const store = await ArtifactStore.open({ root: path.join(dir, 'store') });
      const scoredRef = status.artifacts.scored as string;
      return { handle, result, status, store, scoredRef, scored: await loadTrajectories(store, scoredRef), entry: await store.stat(scoredRef) };
    }

    it('judges every step through a server that fails and rate-limits calls, calibrates, records the lineage, and pays for no verdict twice when the stage runs again', { timeout: 300_000 }, async () => {
      // Every 4th call fails with a 500, every 5th is rate-limited with retry-after: the judge's own retries cover both.
      const api = await LoopbackApi.start((req, i) =>
        i % 4 === 1 ? { status: 500, body: anthropicError('api_error', 'overloaded') } : i % 5 === 2 ? { status: 429, headers: { 'retry-after': '1' }, body: anthropicError('rate_limit_error', 'slow down') } : { body: anthropicToolUse(verdict(askedRubrics(req), 0.8)) },
      );
      try {
        const calibrationFile = path.join(dir, 'calibration.json');
        await writeFile(calibrationFile, JSON.stringify(fitIsotonic([{ x: 0, y: 0.1 }, { x: 1, y: 0.9 }], { level: 'trajectory', n: 2 }).toJSON()));
        const reward = { judge: { provider: 'anthropic', model: 'claude-test', base_url: api.url, concurrency: 4 }, calibration: { path: calibrationFile } };
        const first = await run(config(reward));
        expect(first.result.metrics?.rollouts).toMatchObject({ episodes: 2 });
        const steps = first.scored.reduce((n, t) => n + t.steps.length, 0);
        expect(first.status.stages.reward.note).toContain(`judge anthropic:claude-test: ${steps}/${steps} steps`);
        for (const t of first.scored) {
          for (const s of t.steps) expect(s.reward?.rubrics['goalProgress']).toMatchObject({ score: 0.8, layer: 'judge' });
          expect(t.reward?.layers).toHaveProperty('judge');
          expect(t.reward?.layers).toHaveProperty('human');
        }
        const lineage = (first.entry.meta as { reward: Record<string, unknown> }).reward;
        expect(lineage).toMatchObject({
          layers: ['rules', 'judge', 'calibration'],
          profile: 'tool-use',
          judge: { provider: 'anthropic', model: 'claude-test', baseURL: api.url, rubrics: ['goalProgress', 'toolSelection', 'parameterCorrectness'] },
          calibration: { path: calibrationFile, kind: 'isotonic' },
        });
        expect((lineage['calibration'] as { sha256: string }).sha256).toMatch(/^sha256:[0-9a-f]{64}$/);
        const judgements = (lineage['judge'] as { judgements: string }).judgements;
        expect(first.entry.parents).toContain(judgements);
        // Each step's verdict was paid for once, however many calls failed on the way.
        const answered = api.requests.filter((_r, i) => i % 4 !== 1 && i % 5 !== 2);
        expect(answered).toHaveLength(steps);
        expect(new Set(answered.map(promptHash)).size).toBe(steps);
        expect(api.requests.length).toBeGreaterThan(steps);

        // The same rollouts again (same seed and tasks): every verdict comes from the store's cache.
        const calls = api.requests.length;
        const again = await run(config(reward));
        expect(api.requests.length).toBe(calls);
        expect(again.status.stages.reward.note).toContain(`${steps}/${steps} steps, 0 calls, ${steps} cached`);
        expect(again.scored.map((t) => t.reward?.total)).toEqual(first.scored.map((t) => t.reward?.total));
      } finally {
        await api.close();
      }
    });

    it('stops the judge at its call budget on a rate-limiting OpenAI-compatible server, honouring retry-after, and the loop goes on', { timeout: 300_000 }, async () => {
      const times: number[] = [];
      const api = await LoopbackApi.start((req, i) => {
        times.push(Date.now());
        return i % 2 === 0 ? { status: 429, headers: { 'retry-after': '1' }, body: openaiError('rate limited', 'rate_limit_error') } : { body: openaiCompletion(JSON.stringify(verdict(askedRubrics(req), 0.5))) };
      });
      try {
        const c = config({
          judge: {
            provider: 'openai',
            model: 'judge-test',
            base_url: `${api.url}/v1`,
            concurrency: 1,
            rubrics: [{ name: 'toolSelection', weight: 0.1 }, { name: 'planQuality', description: 'The step follows a sensible plan for the task.', weight: 0.1 }],
            budget: { calls: 3 },
          },
        });
        const r = await run(c);
        expect(r.result.metrics?.rollouts).toMatchObject({ episodes: 2 });
        expect(r.status.stages.reward.note).toMatch(/judge budget exhausted after 4 calls \(\d+ tokens\): 2\/\d+ steps judged, the rest scored without the judge/);
        expect(api.requests).toHaveLength(4);
        expect(api.requests.every((q) => askedRubrics(q).join() === 'toolSelection,planQuality')).toBe(true);
        // Each retry waited for the server's retry-after (1 s).
        for (const i of [1, 3]) expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(950);
        const judged = r.scored.flatMap((t) => t.steps).filter((s) => s.reward?.rubrics['planQuality']?.layer === 'judge');
        expect(judged).toHaveLength(2);
        expect((r.entry.meta as { reward: { layers: string[] } }).reward.layers).toEqual(['rules', 'judge']);
      } finally {
        await api.close();
      }
    });

    it('scores with a learned reward model the trainer fitted and exported, and records it in the lineage', { timeout: 300_000 }, async () => {
      // A first run's rule-scored rollouts are the reward model's training data (3 steps of the real trainer).
      const first = await run(config({}));
      const data = path.join(dir, 'rm-data.jsonl');
      await writeFile(data, first.scored.map((t) => JSON.stringify(t)).join('\n') + '\n');
      const py = path.join(PACKAGE_ROOT, '.venv', 'bin', 'python');
      const trainer = async (command: string, cfg: object): Promise<void> => {
        const file = path.join(dir, `${command}.json`);
        await writeFile(file, JSON.stringify(cfg));
        const t = spawnSync(py, ['-m', 'gymflow_trainer', command, '--config', file], { encoding: 'utf8', timeout: 240_000, cwd: PACKAGE_ROOT });
        if (t.status !== 0) throw new Error(`gymflow_trainer ${command} failed (${String(t.status)}):\n${t.stdout}\n${t.stderr}`);
      };
      await trainer('rm', { data, output_dir: path.join(dir, 'rm'), model: { tiny: TINY }, max_steps: 3, batch_size: 8, max_length: 192, optim: { lr: 1e-3 } });
      const onnx = path.join(dir, 'rm-onnx');
      await trainer('export-onnx', { kind: 'reward_model', checkpoint: path.join(dir, 'rm', 'final'), output_dir: onnx });

      const r = await run(config({ learned: { path: onnx, weight: 0.3 } }));
      expect(r.result.metrics?.rollouts).toMatchObject({ episodes: 2 });
      for (const t of r.scored) {
        for (const s of t.steps) expect(s.reward?.rubrics['learned']).toMatchObject({ layer: 'learned', weight: expect.any(Number) as number });
        expect(t.reward?.layers).toHaveProperty('learned');
      }
      const lineage = (r.entry.meta as { reward: { layers: string[]; learned: { path: string; sha256: string; weight: number } } }).reward;
      expect(lineage.layers).toEqual(['rules', 'learned']);
      expect(lineage.learned).toMatchObject({ path: onnx, weight: 0.3 });
      expect(lineage.learned.sha256).toMatch(/^sha256:[0-9a-f]{64}$/);
      // The same rollouts scored by the rules alone carry no learned rubric.
      expect(first.scored.flatMap((t) => t.steps).some((s) => s.reward?.rubrics['learned'] !== undefined)).toBe(false);
    });

    it('counts the calls of a failed attempt against the budget of its retry', { timeout: 300_000 }, async () => {
      // Calls 2 and 3 fail with a 500: the third step's request and its one retry, so the first attempt fails
      // (JUDGE_UNAVAILABLE) having paid for 4 calls. Its retry reads the first two verdicts from the cache and
      // may make only 1 more call of the budget of 5: 3 of the 4 steps are judged.
      const api = await LoopbackApi.start((req, i) => (i === 2 || i === 3 ? { status: 500, body: anthropicError('api_error', 'overloaded') } : { body: anthropicToolUse(verdict(askedRubrics(req), 0.7)) }));
      try {
        // A model of its own: the verdicts the other tests paid for are in the store's cache under theirs.
        const r = await run(config({ judge: { provider: 'anthropic', model: 'claude-budget', base_url: api.url, concurrency: 1, max_retries: 1, budget: { calls: 5 } } }));
        expect(r.result.metrics?.rollouts).toMatchObject({ episodes: 2 });
        const events = (await r.handle.fetchHistory()).events ?? [];
        const judgeAttempts = events.filter((e) => e.activityTaskStartedEventAttributes !== undefined && e.activityTaskStartedEventAttributes !== null).map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 1);
        expect(Math.max(...judgeAttempts)).toBe(2);
        expect(api.requests).toHaveLength(5);
        expect(r.status.stages.reward.note).toMatch(/judge budget exhausted after 5 calls \(\d+ tokens\): 3\/4 steps judged/);
      } finally {
        await api.close();
      }
    });

    it('fails the stage at once, naming the key, when the judge API refuses it', { timeout: 120_000 }, async () => {
      const api = await LoopbackApi.start(() => ({ status: 401, body: openaiError('invalid api key', 'invalid_request_error') }));
      try {
        if (!local) throw new Error('no test environment');
        const c = config({ judge: { provider: 'openai', model: 'judge-test', base_url: `${api.url}/v1` } });
        const handle = await local.env.client.workflow.start(pipeline, { taskQueue: cpuQueue, workflowId: `${c.name}-${randomUUID()}`, args: [c] });
        const err = await handle.result().then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(WorkflowFailedError);
        const status = await handle.query(pipelineStatusQuery);
        expect(status.stages.reward.state).toBe('failed');
        expect(status.lastError?.message).toMatch(/reward\.judge: the judge API refused the request \(check the workers' OPENAI_API_KEY\).*401/);
        // Not retried: one attempt, one request per step it started (no retries of a 401).
        const events = (await handle.fetchHistory()).events ?? [];
        const started = events.filter((e) => e.activityTaskStartedEventAttributes !== undefined && e.activityTaskStartedEventAttributes !== null);
        const judgeScheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'judgeRollouts');
        expect(judgeScheduled).toBeDefined();
        expect(started.every((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) === 1)).toBe(true);
        expect(events.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'scoreRollouts')).toBe(false);
      } finally {
        await api.close();
      }
    });
  });
});
