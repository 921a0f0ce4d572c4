import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { requires } from './support/requires.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

const python = requires.python(['torch', 'transformers', 'gymflow_trainer']);

function gymflow(...args: string[]): string {
  const r = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'gymflow.js'), ...args], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`gymflow ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

// What `gymflow export` writes is exactly what the trainer's loaders read: collect real episodes, score
// them, export every format, and load each with gymflow_trainer.data and the tiny tokenizer.
python.describe('export → trainer round trip', () => {
  it('loads SFT, DPO and RL exports with loss masks on assistant tokens only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-roundtrip-'));
    const runs = join(dir, 'runs.jsonl');
    const store = ['--store', join(dir, 'store')];
    gymflow('collect', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '3', '--group-size', '2', '--score', '-o', join(dir, 'expert.jsonl'), '--no-progress', ...store);
    gymflow('collect', '--env', 'gymflow/tool-use-v0', '--agent', 'random', '-n', '3', '--group-size', '2', '--score', '-o', join(dir, 'random.jsonl'), '--no-progress', ...store);
    spawnSync('bash', ['-c', `cat ${join(dir, 'expert.jsonl')} ${join(dir, 'random.jsonl')} > ${runs}`]);
    for (const format of ['sft', 'dpo', 'rl']) gymflow('export', '--format', format, '--in', runs, '-o', join(dir, `${format}.jsonl`), ...store);

    const script = `
import json, sys
from gymflow_trainer.tiny import build_tokenizer
from gymflow_trainer.data import load_sft, load_dpo, load_rl, IGNORE
tok = build_tokenizer()
d = sys.argv[1]
sft = load_sft(d + "/sft.jsonl", tok, max_length=4096)
dpo = load_dpo(d + "/dpo.jsonl", tok, max_length=4096)
rl = load_rl(d + "/rl.jsonl", tok, max_length=4096)
im_start = tok.convert_tokens_to_ids("<|im_start|>")
def trained_text(ids, labels):
    return tok.decode([i for i, l in zip(ids, labels) if l != IGNORE])
first = sft[0]
print(json.dumps({
  "sft": len(sft), "dpo": len(dpo), "rl": len(rl),
  "sft_trained": sum(e.num_trained for e in sft),
  "sft_tokens": sum(len(e.input_ids) for e in sft),
  "trained_text": trained_text(first.input_ids, first.labels),
  "full_text": tok.decode(first.input_ids),
}))
`;
    const r = spawnSync(join(PACKAGE_ROOT, '.venv', 'bin', 'python'), ['-c', script, dir], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as Record<string, number | string>;
    expect(out.sft).toBe(12); // 6 expert + 6 random trajectories, one conversation each
    expect(out.rl).toBe(12); // 6 groups of 2 samples
    expect(out.dpo).toBeGreaterThan(0); // both collections drew the same tasks (same seed schedule): expert vs random pairs
    expect(Number(out.sft_trained)).toBeGreaterThan(0);
    expect(Number(out.sft_trained)).toBeLessThan(Number(out.sft_tokens));
    // Only assistant turns are trained: the tool calls are, the task text and observations are not.
    expect(out.trained_text).toContain('<tool_call>');
    expect(out.full_text).toContain('<|im_start|>tool');
    expect(out.trained_text).not.toContain('<|im_start|>');
  });
});
