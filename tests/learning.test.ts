import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { registerBuiltinEnvs } from '../src/envs/register.js';
import { evaluate } from '../src/eval/evaluate.js';
import type { EvalResult } from '../src/eval/result.js';
import { resolveAgent } from '../src/policy/specs.js';
import { requires } from './support/requires.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { TRAINER_ENV_DEFAULTS } from '../src/runtime/trainer-process.js';

// Learning, end to end with every real part: expert trajectories of gymflow/tool-use-v0 (train split) →
// `gymflow export --format sft` → the recipe of examples/learning/sft-tool-use.yaml trained by the Python
// trainer → `export-onnx` → the policy acting through `local:DIR` (onnxruntime, greedy) on the HELD-OUT tasks,
// scored by the project's evaluation (src/eval/evaluate.ts). The same recipe's untrained model is evaluated
// first: success must go from ~0 to a majority, at least 0.5 (0.61-0.68 measured). Takes ~6-12 minutes on 2 CPU
// cores (SFT: 1,528 steps). The trainer runs with the workers' thread defaults (OMP_WAIT_POLICY=PASSIVE): with
// spinning threads, another test busy on one core made its SFT over 4x slower, past the spawn limit.

const python = requires.python(['torch', 'transformers', 'onnx', 'onnxruntime', 'gymflow_trainer']);
const py = join(PACKAGE_ROOT, '.venv', 'bin', 'python');
const ENV = 'gymflow/tool-use-v0';
const RECIPE = join(PACKAGE_ROOT, 'examples', 'learning', 'sft-tool-use.yaml');
/** Held-out tasks of tool-use-v0 (the whole split is evaluated after training). */
const HELDOUT_TASKS = 74;
/** Episodes of the untrained model: it rambles to the token limit every step, so a sample is enough. */
const BEFORE_EPISODES = 12;
/** Greedy, and a completion limit above the longest expert call (~60 tokens with this tokenizer). */
const AGENT_QUERY = 'temperature=0&max_new_tokens=96';
/** Step limit (as the tool-use demo collected until 2026-12-06): expert episodes take at most 5 steps. */
const MAX_STEPS = 8;

function gymflow(args: string[], what: string): void {
  const r = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'gymflow.js'), ...args], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${what} failed (gymflow ${args.join(' ')}):\n${r.stdout}\n${r.stderr}`);
}

function trainer(args: string[], what: string): string {
  const r = spawnSync(py, args, { encoding: 'utf8', timeout: 1_500_000, cwd: PACKAGE_ROOT, env: { ...TRAINER_ENV_DEFAULTS, ...process.env } });
  if (r.status !== 0) throw new Error(`${what} failed (python ${args.join(' ')}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function exportOnnx(dir: string, checkpoint: string, output: string): void {
  const cfg = join(dir, `export-${output.split('/').at(-1) ?? 'onnx'}.json`);
  writeFileSync(cfg, JSON.stringify({ kind: 'policy', checkpoint, output_dir: output }));
  trainer(['-m', 'gymflow_trainer', 'export-onnx', '--config', cfg], `export-onnx of ${checkpoint}`);
}

async function heldoutSuccess(onnxDir: string, n: number): Promise<EvalResult> {
  return evaluate({ envId: ENV, agent: `local:${onnxDir}?${AGENT_QUERY}`, resolveAgent, split: 'heldout', n, seed: 0, concurrency: 2, maxSteps: MAX_STEPS });
}

python.describe('learning on gymflow/tool-use-v0', () => {
  python.it(
    'SFT of a tiny model on expert trajectories takes held-out success from ~0 to a majority (≥ 0.5; 0.61-0.68 measured)',
    async () => {
      registerBuiltinEnvs();
      const dir = mkdtempSync(join(tmpdir(), 'gymflow-learning-'));
      try {
        const store = ['--store', join(dir, 'store')];
        const runs = join(dir, 'expert.jsonl');
        const sft = join(dir, 'sft.jsonl');
        gymflow(['collect', '--env', ENV, '--agent', 'expert', '-o', runs, '--no-progress', ...store], 'collect');
        gymflow(['export', '--format', 'sft', '--in', runs, '-o', sft, ...store], 'export');

        // The recipe with this run's paths: the BPE learns from the same SFT file.
        const recipe = parseYaml(readFileSync(RECIPE, 'utf8')) as { model: { tiny: Record<string, unknown> } } & Record<string, unknown>;
        recipe.data = sft;
        recipe.output_dir = join(dir, 'sft-run');
        recipe.model.tiny.bpe_corpus = [sft];
        const config = join(dir, 'sft.json');
        writeFileSync(config, JSON.stringify(recipe));

        // Before: the recipe's model as built, untrained (same tokenizer, same architecture).
        trainer(['-m', 'gymflow_trainer.tiny', join(dir, 'init'), '--config', config], 'tiny model');
        exportOnnx(dir, join(dir, 'init'), join(dir, 'init-onnx'));
        const before = await heldoutSuccess(join(dir, 'init-onnx'), BEFORE_EPISODES);

        const out = trainer(['-m', 'gymflow_trainer', 'sft', '--config', config], 'sft');
        const done = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { event?: string; path?: string; elapsed_s?: number };
        expect(done.event).toBe('done');
        exportOnnx(dir, done.path as string, join(dir, 'policy-onnx'));
        const after = await heldoutSuccess(join(dir, 'policy-onnx'), HELDOUT_TASKS);

        const b = before.metrics.success;
        const a = after.metrics.success;
        console.log(
          `learning on ${ENV} (held-out): before SFT ${b.successes}/${b.n} = ${(b.mean ?? 0).toFixed(3)}; ` +
            `after SFT ${a.successes}/${a.n} = ${(a.mean ?? 0).toFixed(3)} (wilson ${JSON.stringify(a.wilson)}); sft ${done.elapsed_s} s`,
        );
        expect(after.tasks).toBe(HELDOUT_TASKS);
        expect(b.mean ?? 1).toBeLessThanOrEqual(0.1);
        // Measured with this recipe: 50/74 = 0.68 (Wilson [0.56, 0.77]); runs differ a little with thread
        // counts and float order, so the bound is the majority, below the measured level. docs/trainer.md,
        // "Learning on tool-use", has the experiments.
        expect(a.mean ?? 0).toBeGreaterThanOrEqual(0.5);
        expect((a.mean ?? 0) - (b.mean ?? 0)).toBeGreaterThanOrEqual(0.4);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    1_800_000,
  );
});
