import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requires } from '../../../tests/support/requires.js';
import { ConfigError } from '../../core/errors.js';
import { parseTrajectory, type Trajectory } from '../../core/trajectory.js';
import { OnnxRewardModel } from './onnx-reward-model.js';
import { encodeStepInputs } from './step-input.js';
import { PACKAGE_ROOT } from '../../core/package-root.js';

const python = requires.python(['gymflow_trainer', 'transformers', 'onnxruntime']);
const venvPython = join(PACKAGE_ROOT, '.venv', 'bin', 'python');

function run(cmd: string, args: string[], what: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 240_000, cwd: PACKAGE_ROOT });
  if (r.status !== 0) throw new Error(`${what} failed (${String(r.status)}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function gymflow(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'gymflow.js'), ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function readJsonl(path: string): Trajectory[] {
  return readFileSync(path, 'utf8').trim().split('\n').map((l, i) => parseTrajectory(JSON.parse(l), `${path}:${i + 1}`));
}

describe('OnnxRewardModel', () => {
  it('refuses a directory that is not a reward-model export, naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-rm-bad-'));
    await expect(OnnxRewardModel.load(dir)).rejects.toThrow(ConfigError);
    await expect(OnnxRewardModel.load(dir)).rejects.toThrow(/gymflow_reward_model\.json: cannot read the reward-model manifest/);
    writeFileSync(join(dir, 'gymflow_reward_model.json'), JSON.stringify({ format: 'gymflow-onnx-reward-model', version: 1, input: 'other-v9', max_length: 8, pad_token_id: 0 }));
    await expect(OnnxRewardModel.load(dir)).rejects.toThrow(/gymflow_reward_model\.json \$\.input: /);
  });
});

// Real pipeline: collect episodes, score them with the rules, train a tiny reward model on those step scores
// with the real trainer CLI, export it with `export-onnx`, then score the same steps in TypeScript.
python.describe('learned reward model end to end', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gymflow-rm-'));
  const runs = join(dir, 'runs.jsonl');
  const onnxDir = join(dir, 'onnx');
  let trajectories: Trajectory[] = [];
  let torchScores: number[][] = [];

  beforeAll(() => {
    const store = ['--store', join(dir, 'store'), '--no-progress'];
    for (const agent of ['expert', 'random']) {
      const r = gymflow('collect', '--env', 'gymflow/tool-use-v0', '--agent', agent, '-n', '3', '-o', join(dir, `${agent}.jsonl`), ...store);
      if (r.status !== 0) throw new Error(r.stderr);
    }
    writeFileSync(runs, readFileSync(join(dir, 'expert.jsonl'), 'utf8') + readFileSync(join(dir, 'random.jsonl'), 'utf8'));
    const scored = join(dir, 'scored.jsonl');
    if (gymflow('reward', 'score', runs, '--domain', 'tool-use', '-o', scored).status !== 0) throw new Error('reward score failed');
    const tiny = { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2 };
    const rmConfig = join(dir, 'rm.json');
    writeFileSync(rmConfig, JSON.stringify({ data: scored, output_dir: join(dir, 'rm'), model: { tiny }, max_steps: 3, batch_size: 8, max_length: 192, optim: { lr: 1e-3 } }));
    const events = run(venvPython, ['-m', 'gymflow_trainer', 'rm', '--config', rmConfig], 'rm training').trim().split('\n').map((l) => JSON.parse(l) as { event: string });
    expect(events.at(-1)?.event).toBe('done');
    const exportConfig = join(dir, 'export.json');
    writeFileSync(exportConfig, JSON.stringify({ kind: 'reward_model', checkpoint: join(dir, 'rm', 'final'), output_dir: onnxDir }));
    run(venvPython, ['-m', 'gymflow_trainer', 'export-onnx', '--config', exportConfig], 'export-onnx');
    const script = `
import json, sys
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from gymflow_trainer import rm
d = sys.argv[1]
model = AutoModelForSequenceClassification.from_pretrained(d + "/rm/final").eval()
tok = AutoTokenizer.from_pretrained(d + "/rm/final")
trajs = [json.loads(l) for l in open(d + "/runs.jsonl")]
print(json.dumps([rm.score_steps(model, tok, rm.encode_trajectory(tok, t, 192)) for t in trajs]))
`;
    torchScores = JSON.parse(run(venvPython, ['-c', script, dir], 'torch scoring').trim().split('\n').at(-1) as string) as number[][];
    trajectories = readJsonl(runs);
  }, 300_000);

  it('scores every step as torch does (1e-4), batched or one by one', async () => {
    const model = await OnnxRewardModel.load(onnxDir, { batchSize: 4 });
    try {
      expect(model.maxLength).toBe(192);
      let steps = 0;
      for (const [k, t] of trajectories.entries()) {
        const scores = await model.scoreSteps(t);
        const want = torchScores[k] as number[];
        expect(scores.length).toBe(want.length);
        scores.forEach((s, p) => expect(Math.abs(s - (want[p] as number))).toBeLessThanOrEqual(1e-4));
        const single = await Promise.all(encodeStepInputs(model.tokenizer, t, 192).map((row) => model.scoreIds([row])));
        single.forEach((s, p) => expect(Math.abs((s[0] as number) - (scores[p] as number))).toBeLessThanOrEqual(1e-5));
        steps += scores.length;
      }
      expect(steps).toBeGreaterThan(10);
    } finally {
      await model.release();
    }
    await expect(model.scoreIds([[1]])).rejects.toThrow(/released/);
  });

  it('`gymflow reward score --reward-model` fills a learned layer on every step; without it nothing changes', () => {
    const withModel = join(dir, 'learned.jsonl');
    const r = gymflow('reward', 'score', runs, '--domain', 'tool-use', '--reward-model', onnxDir, '--learned-weight', '0.3', '-o', withModel, '--json');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ scored: trajectories.length, skipped: 0 });
    const plain = join(dir, 'plain.jsonl');
    expect(gymflow('reward', 'score', runs, '--domain', 'tool-use', '-o', plain).status).toBe(0);
    const learned = readJsonl(withModel);
    const rulesOnly = readJsonl(plain);
    learned.forEach((t, k) => {
      const base = rulesOnly[k] as Trajectory;
      expect(base.reward?.layers).not.toHaveProperty('learned');
      t.steps.forEach((s, p) => {
        const rubrics = s.reward?.rubrics ?? {};
        const l = rubrics['learned'];
        expect(l?.layer).toBe('learned');
        expect(Math.abs((l?.score as number) - (torchScores[k]?.[p] as number))).toBeLessThanOrEqual(1e-4);
        expect(base.steps[p]?.reward?.rubrics).not.toHaveProperty('learned');
        // the step score is still the weighted mean of the block, with learned weighing 0.3 against the rules
        const sum = Object.values(rubrics).reduce((acc, x) => acc + (x.weight ?? 0) * x.score, 0);
        expect(sum).toBeCloseTo(s.reward?.score as number, 9);
        // the rule rubrics and their scores are those of the rules-only scoring
        const rules = Object.fromEntries(Object.entries(rubrics).filter(([n]) => n !== 'learned').map(([n, x]) => [n, x.score]));
        expect(rules).toEqual(Object.fromEntries(Object.entries(base.steps[p]?.reward?.rubrics ?? {}).map(([n, x]) => [n, x.score])));
      });
      const layers = t.reward?.layers ?? {};
      expect(layers['learned']).toBeGreaterThan(0);
      expect(Object.values(layers).reduce((a, b) => a + b, 0)).toBeCloseTo(t.reward?.total as number, 9);
    });
  });

  it('`--reward-model` on a directory that is not an export fails and names the manifest', () => {
    const r = gymflow('reward', 'score', runs, '--domain', 'tool-use', '--reward-model', dir, '-o', join(dir, 'x.jsonl'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/gymflow_reward_model\.json: cannot read the reward-model manifest/);
  });
});
