import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import { registryToolLookup } from '../core/chat/tool-lookup.js';
import { ConfigError } from '../core/errors.js';
import { make } from '../core/registry.js';
import { runEpisode } from '../core/rollout.js';
import { loadTokenizer } from '../core/tokenizer.js';
import type { Trajectory } from '../core/trajectory.js';
import { registerBuiltinEnvs } from '../envs/register.js';
import { collect } from '../hub/collect.js';
import { toRlRecord } from '../hub/export/rl.js';
import { LocalPolicy, type LocalPolicyOptions } from './local.js';
import { acquireModel } from './model-pool.js';
import { parseLocalSpec, resolveAgent } from './specs.js';
import { INVALID_TOOL_CALL } from './tool-call-parsing.js';
import { PACKAGE_ROOT } from '../core/package-root.js';

// End to end with the real exporter and real onnxruntime: a tiny random Llama is built and exported by
// the trainer (`gymflow_trainer.tiny` + `export-onnx`), then run as `local:DIR` in tool-use episodes.

const python = requires.python(['torch', 'transformers', 'onnx', 'onnxruntime', 'gymflow_trainer']);
const py = join(PACKAGE_ROOT, '.venv', 'bin', 'python');
const ENV = 'gymflow/tool-use-v0';
const MAX_NEW = 40;

function run(args: string[], what: string): string {
  const r = spawnSync(py, args, { encoding: 'utf8', timeout: 180_000, cwd: PACKAGE_ROOT });
  if (r.status !== 0) throw new Error(`${what} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** A checkpoint (save_pretrained) and its ONNX export. Long context: byte-level prompts are ~2k tokens. */
function exportTinyPolicy(): { checkpoint: string; onnx: string } {
  const root = mkdtempSync(join(tmpdir(), 'gymflow-local-'));
  const checkpoint = join(root, 'ckpt');
  const onnx = join(root, 'onnx');
  run(['-c', `from gymflow_trainer.tiny import save_tiny\nfrom gymflow_trainer.config import TinyModelConfig\nsave_tiny(${JSON.stringify(checkpoint)}, TinyModelConfig(max_position_embeddings=8192, seed=3))`], 'tiny model');
  const cfg = join(root, 'export.json');
  writeFileSync(cfg, JSON.stringify({ checkpoint, output_dir: onnx }));
  run(['-m', 'gymflow_trainer', 'export-onnx', '--config', cfg], 'export-onnx');
  return { checkpoint, onnx };
}

async function episode(options: Omit<LocalPolicyOptions, 'envId'>, seed: number, maxSteps = 3): Promise<{ t: Trajectory; policy: LocalPolicy }> {
  const policy = new LocalPolicy({ envId: ENV, ...options });
  const env = make(ENV, { maxEpisodeSteps: maxSteps });
  try {
    return { t: await runEpisode(env, policy, { envId: ENV, seed }), policy };
  } finally {
    await env.close();
    await policy.close();
  }
}

function tokensOf(t: Trajectory): number[][] {
  return t.steps.map((s) => s.tokens?.completion ?? []);
}

describe('parseLocalSpec', () => {
  it('reads DIR and the settings after ?', () => {
    expect(parseLocalSpec('runs/p')).toEqual({ dir: 'runs/p', options: {} });
    expect(parseLocalSpec('runs/p?temperature=0&top_p=0.9&max_new_tokens=64&threads=2')).toEqual({
      dir: 'runs/p',
      options: { temperature: 0, topP: 0.9, maxNewTokens: 64, intraOpThreads: 2 },
    });
    expect(() => parseLocalSpec('?temperature=1')).toThrow(/names no directory/);
    expect(() => parseLocalSpec('runs/p?temp=1')).toThrow(/unknown setting 'temp' \(known: temperature, top_p, max_new_tokens, threads\)/);
    expect(() => parseLocalSpec('runs/p?temperature=hot')).toThrow(/temperature must be a number, got 'hot'/);
  });

  it('resolveAgent fails fast on a directory without a manifest, naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-local-empty-'));
    expect(() => resolveAgent(`local:${dir}`, ENV)).toThrow(ConfigError);
    expect(() => resolveAgent(`local:${dir}`, ENV)).toThrow(/gymflow_policy\.json: cannot read the policy manifest/);
  });
});

python.describe('local:DIR policy on an exported tiny model', () => {
  let dirs: { checkpoint: string; onnx: string };

  beforeAll(() => {
    registerBuiltinEnvs();
    dirs = exportTinyPolicy();
  }, 180_000);

  it('collects tool-use episodes: invalid calls are actions, episodes end by max_steps, tokens and logprobs are recorded', async () => {
    const { trajectories, summary } = await collect({ resolveAgent, envId: ENV, agent: `local:${dirs.onnx}?max_new_tokens=${MAX_NEW}`, n: 1, groupSize: 2, maxSteps: 3, seed: 1 });
    expect(summary.failures.total).toBe(0);
    expect(trajectories).toHaveLength(2);
    const tok = await loadTokenizer(dirs.onnx);
    for (const t of trajectories) {
      expect(t.agent.name).toBe(`local:${dirs.onnx}`);
      expect(t.outcome.reason).toBe('max_steps');
      expect(t.steps).toHaveLength(3);
      for (const s of t.steps) {
        // Random weights write no parseable call: the invalid-call action, which the env rejects as data.
        expect(s.action.tool).toBe(INVALID_TOOL_CALL);
        expect(s.error?.code).toBe('unknown_tool');
        const completion = s.tokens?.completion ?? [];
        expect(completion.length).toBeGreaterThan(0);
        expect(completion.length).toBeLessThanOrEqual(MAX_NEW);
        expect(s.logprobs).toHaveLength(completion.length);
        expect(s.logprobs?.every((lp) => Number.isFinite(lp) && lp <= 0)).toBe(true);
        // The prompt ids are the ChatML of the context, ending with the generation prompt.
        const prompt = tok.decode(s.tokens?.prompt ?? []);
        expect(prompt.startsWith('<|im_start|>system\n')).toBe(true);
        expect(prompt.endsWith('<|im_start|>assistant\n')).toBe(true);
      }
      // The raw output of a step is replayed to the model in the next prompt, with the parse error.
      const second = tok.decode(t.steps[1]?.tokens?.prompt ?? []);
      expect(second).toContain('Error: your tool call could not be parsed');
    }

    // The RL export of the group carries every step's ids and log-probs, and the trainer's per-step loader
    // takes them as they are (old log-probs = the rollout's).
    const rlPath = join(mkdtempSync(join(tmpdir(), 'gymflow-local-rl-')), 'rl.jsonl');
    writeFileSync(rlPath, `${JSON.stringify(toRlRecord(trajectories, registryToolLookup()))}\n`);
    const script = `
import json, sys
from gymflow_trainer.data import load_rl_steps, rollout_tokens_complete, IGNORE
path = sys.argv[1]
samples = load_rl_steps(path, max_length=8192)
print(json.dumps({"complete": rollout_tokens_complete(path), "samples": len(samples),
                  "trained": [sum(1 for l in s.tokens.labels if l != IGNORE) for s in samples],
                  "old": [s.old_logp[-1] for s in samples]}))
`;
    const out = JSON.parse(run(['-c', script, rlPath], 'load_rl_steps').trim().split('\n').at(-1) as string) as { complete: boolean; samples: number; trained: number[]; old: number[] };
    const steps = trajectories.flatMap((t) => t.steps);
    expect(out.complete).toBe(true);
    expect(out.samples).toBe(steps.length);
    expect(out.trained).toEqual(steps.map((s) => s.tokens?.completion?.length));
    out.old.forEach((lp, i) => expect(lp).toBeCloseTo(steps[i]?.logprobs?.at(-1) as number, 6));
  }, 120_000);

  it('is deterministic for a seed and varies with it', async () => {
    const a = await episode({ dir: dirs.onnx, seed: 11, maxNewTokens: MAX_NEW }, 7);
    const b = await episode({ dir: dirs.onnx, seed: 11, maxNewTokens: MAX_NEW }, 7);
    const c = await episode({ dir: dirs.onnx, seed: 12, maxNewTokens: MAX_NEW }, 7);
    expect(tokensOf(a.t)).toEqual(tokensOf(b.t));
    expect(a.t.steps.map((s) => s.logprobs)).toEqual(b.t.steps.map((s) => s.logprobs));
    expect(tokensOf(a.t)).not.toEqual(tokensOf(c.t));
  }, 60_000);

  it('a conversation longer than the model context is an invalid call, not a crash', async () => {
    // The same graph with a manifest that declares a short context (the tool-use prompt is ~2,200 byte tokens).
    const short = mkdtempSync(join(tmpdir(), 'gymflow-local-short-'));
    cpSync(dirs.onnx, short, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(short, 'gymflow_policy.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(short, 'gymflow_policy.json'), JSON.stringify({ ...manifest, max_position_embeddings: 512 }));
    const { t } = await episode({ dir: short, seed: 1, maxNewTokens: MAX_NEW }, 3, 2);
    expect(t.steps).toHaveLength(2);
    expect(t.outcome.reason).toBe('max_steps');
    for (const s of t.steps) {
      expect(s.action.tool).toBe(INVALID_TOOL_CALL);
      expect(String(s.action.params['error'])).toMatch(/context overflow: the prompt is \d+ tokens and the model's context is 512/);
      expect(s.tokens).toBeUndefined(); // nothing sampled: nothing for RL to train on
    }
  }, 60_000);

  it('reusing the KV cache across steps gives the tokens of a cold prefill', async () => {
    for (const temperature of [0, 1]) {
      const warm = await episode({ dir: dirs.onnx, seed: 5, temperature, maxNewTokens: MAX_NEW }, 2);
      const cold = await episode({ dir: dirs.onnx, seed: 5, temperature, maxNewTokens: MAX_NEW, reuseCache: false }, 2);
      expect(warm.policy.stats.cachedTokens).toBeGreaterThan(1000); // steps 2 and 3 reuse the conversation so far
      expect(cold.policy.stats.cachedTokens).toBe(0);
      expect(tokensOf(warm.t)).toEqual(tokensOf(cold.t));
      warm.t.steps.forEach((s, i) => {
        const other = cold.t.steps[i]?.logprobs ?? [];
        s.logprobs?.forEach((lp, j) => expect(Math.abs(lp - (other[j] as number))).toBeLessThan(1e-4));
      });
    }
  }, 60_000);

  it('logprobs are log-softmax of the raw logits, as transformers computes them from the checkpoint', async () => {
    // Temperature 0.7 for sampling; the recorded log-probs are still at temperature 1.
    const { t } = await episode({ dir: dirs.onnx, seed: 3, temperature: 0.7, topP: 0.95, maxNewTokens: MAX_NEW }, 4, 2);
    const steps = t.steps.map((s) => ({ prompt: s.tokens?.prompt, completion: s.tokens?.completion, logprobs: s.logprobs }));
    const file = join(mkdtempSync(join(tmpdir(), 'gymflow-lp-')), 'steps.json');
    writeFileSync(file, JSON.stringify(steps));
    const script = `
import json, sys, torch
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.float32).eval()
diffs = []
for s in json.load(open(sys.argv[2])):
    ids = torch.tensor([s["prompt"] + s["completion"]])
    with torch.no_grad():
        lp = torch.log_softmax(model(ids).logits[0].double(), -1)
    n = len(s["prompt"])
    ref = [lp[n - 1 + j, t].item() for j, t in enumerate(s["completion"])]
    diffs.append(max(abs(a - b) for a, b in zip(ref, s["logprobs"])))
print(json.dumps(diffs))
`;
    const diffs = JSON.parse(run(['-c', script, dirs.checkpoint, file], 'logprob check').trim().split('\n').at(-1) as string) as number[];
    expect(diffs).toHaveLength(2);
    for (const d of diffs) expect(d).toBeLessThan(1e-4);
  }, 120_000);

  it('shares one session per directory and releases it when the last lease is returned', async () => {
    // Judged by the sessions themselves, not by the pool's size: another test's idle session of this directory
    // (released 30 s after its last lease, later on a busy machine) may come or go meanwhile. No other test uses
    // three threads, so these leases share a session of their own.
    const a = await acquireModel(dirs.onnx, { intraOpThreads: 3, idleMs: 0 });
    const b = await acquireModel(dirs.onnx, { intraOpThreads: 3, idleMs: 0 });
    expect(a.model).toBe(b.model);
    const released = (): Promise<boolean> => a.model.forward(a.model.emptyCache(), [1]).then(() => false, (err: unknown) => /session was released/.test(String(err)));
    a.release();
    a.release(); // idempotent
    await new Promise((r) => setTimeout(r, 20));
    expect(await released()).toBe(false); // b still holds it
    b.release();
    // The idle timer (0 ms here) and the session's release run on the event loop: wait for them.
    await until(released);
    const c = await acquireModel(dirs.onnx, { intraOpThreads: 3, idleMs: 0 });
    expect(c.model).not.toBe(a.model); // a released session is loaded again, not handed out
    c.release();
  });
});

/** Resolves once `done()` holds, checking every 10 ms; fails after `limitMs` (a limit for a hang, not a margin). */
async function until(done: () => boolean | Promise<boolean>, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
