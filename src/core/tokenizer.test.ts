import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import { ConfigError } from './errors.js';
import { loadTokenizer } from './tokenizer.js';
import { PACKAGE_ROOT } from './package-root.js';

const python = requires.python(['tokenizers', 'transformers', 'gymflow_trainer']);
const py = join(PACKAGE_ROOT, '.venv', 'bin', 'python');

/** Texts that exercise the pre-tokenizer regex, byte fallback of unicode, and special tokens inside text. */
const TEXTS = [
  'Hello world',
  '<|im_start|>system\nYou are an agent.<|im_end|>\n<|im_start|>assistant\n',
  'héllo wörld 日本語 🎉 emoji\t\ttabs   spaces\n\n\nnewlines  ',
  '<tool_call>\n{"name":"read_file","arguments":{"path":"README.md"}}\n</tool_call><|im_end|>',
  '<|endoftext|>x<|im_end|><|im_start|><|im_start|>',
  "it's don't we'll I'M 123456 a1b2 x's",
  '  leading\r\nCRLF \u00a0nbsp \u200b zero-width ‮rtl',
  '',
  '<|im_start',
  '{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}  \n  ',
  'The quick brown fox jumps over the lazy dog. def main(): return None',
  'launched: 1989 {"expression":"abs(1989 - 1947)"} Result: 42.50 (184) ٣٤ 1,280',
];

interface PyOut {
  ids: number[][];
  decoded: string[];
  len: number;
  im_end: number;
}

type Split = 'none' | 'digits' | 'numbers' | 'chunks';

/** Builds the tiny tokenizer into a fresh directory and encodes TEXTS with the Python tokenizer. */
function pythonSide(bpeVocabSize: number, split: Split): { dir: string; out: PyOut } {
  const dir = mkdtempSync(join(tmpdir(), 'gymflow-tok-'));
  const textsPath = join(dir, 'texts.json');
  writeFileSync(textsPath, JSON.stringify(TEXTS));
  const script = `
import json, sys
from gymflow_trainer.tiny import build_tokenizer
from transformers import AutoTokenizer
d, bpe, split, texts = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.load(open(sys.argv[4]))
build_tokenizer(bpe, split_digits=split == 'digits', split_numbers=split == 'numbers',
                number_chunk=2 if split == 'chunks' else 0).save_pretrained(d)
tok = AutoTokenizer.from_pretrained(d)
ids = [tok.encode(t, add_special_tokens=False) for t in texts]
print(json.dumps({"ids": ids, "decoded": [tok.decode(i) for i in ids], "len": len(tok),
                  "im_end": tok.convert_tokens_to_ids("<|im_end|>")}))
`;
  const r = spawnSync(py, ['-c', script, dir, String(bpeVocabSize), split, textsPath], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`python tokenizer failed:\n${r.stderr}`);
  return { dir, out: JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as PyOut };
}

python.describe('loadTokenizer matches the Python tokenizer', () => {
  for (const [name, bpe, split] of [
    ['byte-level', 0, 'none'],
    ['BPE (vocab 400)', 400, 'none'],
    ['BPE (vocab 400, single digits)', 400, 'digits'],
    ['BPE (vocab 400, digit runs without their space)', 400, 'numbers'],
    ['BPE (vocab 400, digit runs in pieces of 2)', 400, 'chunks'],
  ] as const) {
    let side: { dir: string; out: PyOut };
    beforeAll(() => {
      side = pythonSide(bpe, split);
    });

    it(`${name}: same ids, decode round trip, vocab size and special ids`, async () => {
      const tok = await loadTokenizer(side.dir);
      expect(TEXTS.map((t) => tok.encode(t))).toEqual(side.out.ids);
      expect(side.out.ids.map((ids) => tok.decode(ids))).toEqual(side.out.decoded);
      expect(side.out.decoded).toEqual(TEXTS); // byte-level: every text round-trips
      expect(tok.vocabSize).toBe(side.out.len);
      expect(tok.tokenId('<|im_end|>')).toBe(side.out.im_end);
      expect(tok.tokenId('<|im_start|>')).toBe(1);
      expect(tok.tokenId('<|no such token|>')).toBeUndefined();
      // Special tokens are single ids, never split into bytes.
      expect(tok.encode('<|im_end|>')).toEqual([side.out.im_end]);
    });
  }
});

it('names the file when the tokenizer directory is missing or malformed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gymflow-tok-bad-'));
  await expect(loadTokenizer(dir)).rejects.toThrow(ConfigError);
  await expect(loadTokenizer(dir)).rejects.toThrow(/tokenizer\.json: cannot read/);
  writeFileSync(join(dir, 'tokenizer.json'), '{not json');
  await expect(loadTokenizer(dir)).rejects.toThrow(/tokenizer\.json: not valid JSON/);
});
