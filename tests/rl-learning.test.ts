import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { requires } from './support/requires.js';
import { runRlRecall } from './support/rl-recall.js';

// RL that learns, on the real path (tests/support/rl-recall.ts): expert episodes of gymflow/recall-v0 with 60% of the
// answers written as words (a flawed demonstrator) → `gymflow export --format sft` → examples/learning/sft-recall.yaml
// (1,000 steps) → `export-onnx` → greedy held-out evaluation → 4 × (`gymflow collect --agent local:…?temperature=1
// --group-size 8 --score` on 64 training tasks → `gymflow export --format rl` → `python -m gymflow_trainer rl` with
// examples/learning/rl-recall.yaml → `export-onnx`) → the same held-out evaluation → `gymflow compare --test mcnemar`.
// The RL phase alone must raise held-out success by ≥ 0.10 on 200 episodes with exact McNemar p < 0.01
// (docs/trainer.md, "RL that learns": +0.26 at full size, 400 episodes; +0.185 from the same SFT with the RL's seeds
// changed; +0.25 at seed 2, +0.085 at seed 1, whose short SFT had barely begun to copy a listed digit; p < 1e-4 at
// every seed). Seed 0 throughout. 187 s measured at load average 2.5 (SFT ~70 s, each RL iteration ~25 s, the
// evaluations ~10 s each); ~6-8 minutes on 2 loaded cores.

const python = requires.python(['torch', 'transformers', 'onnx', 'onnxruntime', 'gymflow_trainer']);

python.describe('RL that learns on gymflow/recall-v0', () => {
  python.it(
    'GRPO iterations after a flawed demonstrator’s SFT raise held-out success by ≥ 0.10 (paired McNemar p < 0.01)',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'gymflow-rl-learning-'));
      try {
        const r = runRlRecall({ dir, iterations: 4, tasksPerIteration: 64, groupSize: 8, heldout: 200, passKTasks: 0, wordShare: 0.6 });
        const gain = (r.after.successes - r.before.successes) / r.after.n;
        const trace = JSON.stringify({ before: r.before, after: r.after, mcnemar: r.mcnemar, iterations: r.iterations, seconds: r.seconds });
        // the SFT policy leaves headroom: mostly words, which the exact match scores 0
        expect(r.before.successes / r.before.n, trace).toBeLessThan(0.2);
        expect(gain, trace).toBeGreaterThanOrEqual(0.1);
        expect(r.mcnemar.pairs, trace).toBe(200);
        expect(r.mcnemar.p, trace).toBeLessThan(0.01);
        // the gain is the policy's: episodes it newly solves, far more than it lost
        expect(r.mcnemar.onlyAfter, trace).toBeGreaterThan(5 * r.mcnemar.onlyBefore);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    900_000,
  );
});
