import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';

/**
 * `gymflow_policy.json`, the manifest `python -m gymflow_trainer export-onnx` writes next to `model.onnx`
 * (docs/policies.md, "Local ONNX policy"): the graph's shape (layers, KV heads, head size), the vocabulary,
 * the end-of-turn ids and the chat format.
 */

const positiveInt = z.number().int().positive();

/** The manifest's schema (unknown fields are kept: later versions may add some). */
export const PolicyManifestSchema = z.looseObject({
  format: z.literal('gymflow-onnx-policy'),
  version: z.literal(1),
  model_type: z.string(),
  num_layers: positiveInt,
  num_kv_heads: positiveInt,
  head_dim: positiveInt,
  vocab_size: positiveInt,
  max_position_embeddings: positiveInt,
  eos_token_ids: z.array(z.number().int().nonnegative()).min(1),
  pad_token_id: z.number().int().nonnegative().nullable().optional(),
  chat_template: z.literal('chatml'),
  /** The prompt format the model was trained with: with the system message (`keep`) or without (`drop`). */
  system_prompt: z.enum(['keep', 'drop']).default('keep'),
  source: z.looseObject({ checkpoint: z.string().optional(), sha256_of_weights: z.string().optional() }).optional(),
  check: z.looseObject({ max_abs_diff: z.number().nullable().optional() }).nullable().optional(),
});

/** A parsed `gymflow_policy.json`. */
export type PolicyManifest = z.infer<typeof PolicyManifestSchema>;

/** File name of the manifest inside a policy directory. */
export const POLICY_MANIFEST = 'gymflow_policy.json';

/**
 * Reads and validates `DIR/gymflow_policy.json` (synchronously: agents are built synchronously, and a bad
 * directory should fail before any episode starts).
 *
 * @throws ConfigError naming the file and, for a schema problem, the field.
 */
export function readPolicyManifest(dir: string): PolicyManifest {
  const path = join(dir, POLICY_MANIFEST);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `${path}: cannot read the policy manifest (${(err as Error).message}); a local policy directory is what ` +
        '`python -m gymflow_trainer export-onnx` writes',
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${path}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = PolicyManifestSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${path} $.${i.path.map(String).join('.')}: ${i.message}`);
    throw new ConfigError(issues.join('\n'));
  }
  return parsed.data;
}
