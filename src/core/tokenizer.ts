/**
 * The tokenizer of a model directory (`tokenizer.json` + `tokenizer_config.json`, as the trainer's
 * `save_pretrained` and `export-onnx` write them), shared by the local ONNX policy and the ONNX reward model.
 *
 * Built on `@huggingface/tokenizers` (a pure-JS port of the Rust `tokenizers` crate). `encode` matches the
 * Python tokenizer's `encode(text, add_special_tokens=False)` id for id — `tests/chat-token-parity.test.ts`
 * and `tokenizer.test.ts` compare both on byte-level and BPE tokenizers — so a prompt tokenized here is the
 * prompt the trainer tokenized.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { ConfigError } from './errors.js';

/** Text ↔ token ids for one model. */
export interface Tokenizer {
  /**
   * Token ids of `text`. Never adds BOS/EOS; the special tokens `<|endoftext|>`, `<|im_start|>` and
   * `<|im_end|>` (every added token of the tokenizer) are recognised inside the text, each as one id.
   */
  encode(text: string): number[];
  /** The text of `ids`, special tokens included (nothing is skipped). */
  decode(ids: readonly number[]): string;
  /** The id of one token string (`'<|im_end|>'`), or `undefined` when the vocabulary lacks it. */
  tokenId(token: string): number | undefined;
  /** Number of ids: the model vocabulary plus added tokens (Python's `len(tokenizer)`). */
  readonly vocabSize: number;
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${path}: cannot read the tokenizer file (${(err as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${path}: not valid JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${path}: expected a JSON object at the top level`);
  }
  return value as Record<string, unknown>;
}

/**
 * Loads the tokenizer of a model directory.
 *
 * @param dir a directory with `tokenizer.json` and (optionally) `tokenizer_config.json`.
 * @throws ConfigError when a file is missing or malformed, naming the file.
 *
 * @example
 * const tok = await loadTokenizer('runs/policy-onnx');
 * tok.encode('<|im_start|>user\nhi<|im_end|>\n'); // [1, …, 2, 201]
 */
export async function loadTokenizer(dir: string): Promise<Tokenizer> {
  const tokenizerPath = join(dir, 'tokenizer.json');
  const json = await readJson(tokenizerPath);
  // tokenizer_config.json only adds metadata (eos/pad names); a bare tokenizer.json is enough to encode.
  let config: Record<string, unknown> = {};
  try {
    config = await readJson(join(dir, 'tokenizer_config.json'));
  } catch (err) {
    if (!(err instanceof ConfigError && /cannot read/.test(err.message))) throw err;
  }
  let hf: HfTokenizer;
  try {
    hf = new HfTokenizer(json, config);
  } catch (err) {
    throw new ConfigError(`${tokenizerPath}: unsupported or malformed tokenizer (${(err as Error).message})`);
  }
  const vocab = hf.get_vocab(true);
  let vocabSize = 0;
  for (const id of vocab.values()) vocabSize = Math.max(vocabSize, id + 1);
  return {
    encode: (text) => hf.encode(text, { add_special_tokens: false }).ids,
    // The library rejects an empty id list; Python decodes it to ''.
    decode: (ids) =>
      ids.length === 0 ? '' : hf.decode([...ids], { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
    tokenId: (token) => hf.token_to_id(token),
    vocabSize,
  };
}
