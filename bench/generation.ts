/**
 * Local generation throughput on the CPU: the TypeScript local policy's ONNX runner against PyTorch's
 * `generate`, on the same checkpoint, prompt and thread count.
 *
 * For each model shape (Qwen2-style, built with `python -m gymflow_trainer.tiny DIR --config FILE`, then
 * `python -m gymflow_trainer export-onnx`):
 *
 * - ONNX: `OnnxCausalLM` (src/policy/onnx-lm.ts) with `intraOpThreads` 1 and 2, the loop `LocalPolicy.act`
 *   runs: one prefill forward over the prompt, then one-token forwards feeding the KV cache back, greedy
 *   (`argmax`) plus the log-probability the policy records (`logSoftmaxAt`). The policy stops at EOS; this
 *   loop does not, so every run decodes exactly `NEW_TOKENS` tokens.
 * - PyTorch: `model.generate(do_sample=False, max_new_tokens=N)`, KV cache on, EOS cleared, same thread
 *   count (`bench/generation-torch.py`).
 *
 * Reported: prefill ms and decode tokens/s (the `N − 1` one-token steps after the prefill), medians over
 * `REPS` runs after a warm-up run, the ratio ONNX / PyTorch, and whether both produced the same ids.
 * Prints a table and writes `bench/results/generation.json`.
 *
 * Usage: `npx tsx bench/generation.ts [--quick]` (needs `.venv`, see docs/trainer.md).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, runBench, writeReport } from './report.js';
import { buildTinyModel, python, PYTHON } from './tiny-model.js';
import { loadTokenizer } from '../src/core/tokenizer.js';
import { renderChatML } from '../src/core/chat/chatml.js';
import { OnnxCausalLM, logitsRow } from '../src/policy/onnx-lm.js';
import { argmax, logSoftmaxAt } from '../src/policy/sampling.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const QUICK = process.argv.includes('--quick');
const NEW_TOKENS = QUICK ? 32 : 128;
const REPS = QUICK ? 2 : 5;
const THREADS = [1, 2];

/** Model shapes (a `TinyModelConfig`: byte-level tokenizer, tied embeddings, GQA). */
const SHAPES = [
  { name: 'h128-l2', arch: 'qwen2', hidden_size: 128, intermediate_size: 512, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2 },
  { name: 'h256-l4', arch: 'qwen2', hidden_size: 256, intermediate_size: 1024, num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2 },
] as const;

/** The fixed prompt: a tool-use system message and a question, then the generation prompt. */
const PROMPT = renderChatML(
  [
    {
      role: 'system',
      content:
        'You are an agent solving a task in the environment gymflow/tool-use-v0 (domain: tool-use) by calling tools, one call per turn.\n\n' +
        '# Tools\n\n{"type":"function","function":{"name":"lookup","description":"","parameters":{"type":"object"}}}\n' +
        '{"type":"function","function":{"name":"submit","description":"","parameters":{"type":"object"}}}\n\n' +
        '# Format\n\nThink briefly, then call exactly one tool:\n<tool_call>\n{"name":"<tool name>","arguments":{...}}\n</tool_call>',
    },
    { role: 'user', content: 'Which has the larger population: Velmora or Ostrakan? Answer with the name.' },
  ],
  true,
);

interface Side {
  prefillMs: number;
  decodeTokensPerSecond: number;
  samples: { prefillMs: number; decodeTokensPerSecond: number }[];
}

interface Row {
  model: string;
  params: number;
  threads: number;
  promptTokens: number;
  newTokens: number;
  onnx: Side;
  torch: Side;
  /** ONNX decode tokens/s ÷ PyTorch decode tokens/s. */
  decodeRatio: number;
  /** PyTorch prefill ms ÷ ONNX prefill ms (> 1: ONNX is faster). */
  prefillRatio: number;
  /** Both produced the same ids. */
  sameTokens: boolean;
  /** Index of the first differing id, when they differ. */
  firstMismatch: number | null;
}

/** Builds the checkpoint and its ONNX export under `dir`; returns both directories. */
async function buildModel(dir: string, shape: (typeof SHAPES)[number]): Promise<{ checkpoint: string; onnx: string }> {
  const { name: _name, ...tiny } = shape;
  return buildTinyModel(dir, tiny);
}

/** One greedy generation of exactly `n` ids through the ONNX runner, timed. */
async function onnxGenerate(lm: OnnxCausalLM, vocabSize: number, promptIds: readonly number[], n: number): Promise<{ ids: number[]; prefillMs: number; decodeTokensPerSecond: number }> {
  const t0 = performance.now();
  let out = await lm.forward(lm.emptyCache(), promptIds);
  let logits = logitsRow(out.logits, lm.vocab, promptIds.length - 1);
  const ids: number[] = [];
  let sink = 0;
  let t1 = 0;
  for (;;) {
    // as the policy does: padding rows of the embedding past the tokenizer are never chosen
    const row = vocabSize < lm.vocab ? logits.subarray(0, vocabSize) : logits;
    const id = argmax(row);
    sink += logSoftmaxAt(logits, id);
    ids.push(id);
    if (ids.length === 1) t1 = performance.now();
    if (ids.length >= n) break;
    out = await lm.forward(out.cache, [id]);
    logits = logitsRow(out.logits, lm.vocab, 0);
  }
  const t2 = performance.now();
  if (Number.isNaN(sink)) throw new Error('ONNX runner produced NaN log-probabilities');
  return { ids, prefillMs: t1 - t0, decodeTokensPerSecond: (n - 1) / ((t2 - t1) / 1000) };
}

async function benchShape(shape: (typeof SHAPES)[number]): Promise<Row[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `gymflow-bench-gen-${shape.name}-`));
  try {
    const { checkpoint, onnx } = await buildModel(dir, shape);
    const tokenizer = await loadTokenizer(onnx);
    const promptIds = tokenizer.encode(PROMPT);
    const params = Number(
      (await python(['-c', `import sys; from transformers import AutoModelForCausalLM as A; m = A.from_pretrained(sys.argv[1]); print(sum(p.numel() for p in m.parameters()))`, checkpoint])).trim(),
    );
    const rows: Row[] = [];
    for (const threads of THREADS) {
      const lm = await OnnxCausalLM.load(onnx, { intraOpThreads: threads });
      let ids: number[] = [];
      const samples: Side['samples'] = [];
      try {
        for (let r = 0; r <= REPS; r++) {
          const g = await onnxGenerate(lm, tokenizer.vocabSize, promptIds, NEW_TOKENS);
          ids = g.ids;
          if (r > 0) samples.push({ prefillMs: g.prefillMs, decodeTokensPerSecond: g.decodeTokensPerSecond });
        }
      } finally {
        await lm.release();
      }
      const spec = { model_dir: checkpoint, prompt_ids: promptIds, new_tokens: NEW_TOKENS, threads, reps: REPS };
      const t = JSON.parse((await python([path.join(HERE, 'generation-torch.py'), JSON.stringify(spec)])).trim().split('\n').pop() as string) as {
        tokens: number[];
        prefill_ms: number;
        decode_tokens_per_s: number;
        runs: { prefill_ms: number; decode_tokens_per_s: number }[];
      };
      const onnxSide: Side = {
        prefillMs: median(samples.map((s) => s.prefillMs)),
        decodeTokensPerSecond: median(samples.map((s) => s.decodeTokensPerSecond)),
        samples,
      };
      const torchSide: Side = {
        prefillMs: t.prefill_ms,
        decodeTokensPerSecond: t.decode_tokens_per_s,
        samples: t.runs.map((x) => ({ prefillMs: x.prefill_ms, decodeTokensPerSecond: x.decode_tokens_per_s })),
      };
      const mismatch = ids.findIndex((id, i) => t.tokens[i] !== id);
      rows.push({
        model: shape.name,
        params,
        threads,
        promptTokens: promptIds.length,
        newTokens: NEW_TOKENS,
        onnx: onnxSide,
        torch: torchSide,
        decodeRatio: onnxSide.decodeTokensPerSecond / torchSide.decodeTokensPerSecond,
        prefillRatio: torchSide.prefillMs / onnxSide.prefillMs,
        sameTokens: mismatch === -1 && t.tokens.length === ids.length,
        firstMismatch: mismatch === -1 ? null : mismatch,
      });
    }
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON}: no Python with the trainer (run scripts/setup.sh, or set GYMFLOW_PYTHON)`);
  const loadBefore = os.loadavg().map((x) => Number(x.toFixed(2)));
  const rows: Row[] = [];
  for (const shape of SHAPES) rows.push(...(await benchShape(shape)));

  const f = (n: number, d = 0): string => n.toFixed(d);
  console.log(`\nGreedy generation on the CPU: ${NEW_TOKENS} new tokens, medians of ${REPS} runs (load before: ${loadBefore.join(' ')})`);
  const head = ['model', 'params', 'threads', 'prompt', 'ONNX prefill ms', 'torch prefill ms', 'ONNX tok/s', 'torch tok/s', 'decode ×', 'same ids'];
  const table = rows.map((r) => [
    r.model,
    `${f(r.params / 1e6, 2)}M`,
    String(r.threads),
    String(r.promptTokens),
    f(r.onnx.prefillMs, 1),
    f(r.torch.prefillMs, 1),
    f(r.onnx.decodeTokensPerSecond),
    f(r.torch.decodeTokensPerSecond),
    f(r.decodeRatio, 2),
    r.sameTokens ? 'yes' : `no (from ${r.firstMismatch ?? '?'})`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => (t[i] as string).length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const t of table) console.log(line(t));
  await writeReport('generation', { quick: QUICK, newTokens: NEW_TOKENS, repetitions: REPS, loadavgBefore: loadBefore, rows });
}

runBench(main);
