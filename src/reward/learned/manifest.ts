import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import { jsonPath } from '../../core/trajectory.js';
import { STEP_INPUT_FORMAT } from './step-input.js';

/**
 * `gymflow_reward_model.json`, the manifest `python -m gymflow_trainer export-onnx` (kind `reward_model`)
 * writes next to `model.onnx`: the step rendering the model was trained on, the longest input, the padding id.
 */

/** File name of the manifest inside a reward-model directory. */
export const REWARD_MODEL_MANIFEST = 'gymflow_reward_model.json';

/** The manifest's schema (unknown fields are kept: later versions may add some). */
export const RewardModelManifestSchema = z.looseObject({
  format: z.literal('gymflow-onnx-reward-model'),
  version: z.literal(1),
  input: z.literal(STEP_INPUT_FORMAT),
  max_length: z.number().int().min(2),
  pad_token_id: z.number().int().nonnegative(),
  model_type: z.string().optional(),
  objective: z.string().nullable().optional(),
});

/** A parsed `gymflow_reward_model.json`. */
export type RewardModelManifest = z.infer<typeof RewardModelManifestSchema>;

/**
 * Reads and validates `DIR/gymflow_reward_model.json`.
 *
 * @throws ConfigError naming the file and, for a schema problem, the field.
 */
export function readRewardModelManifest(dir: string): RewardModelManifest {
  const path = join(dir, REWARD_MODEL_MANIFEST);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `${path}: cannot read the reward-model manifest (${(err as Error).message}); a reward-model directory is what ` +
        '`python -m gymflow_trainer export-onnx` writes with kind: reward_model',
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${path}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = RewardModelManifestSchema.safeParse(value);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${path} ${jsonPath(i.path)}: ${i.message}`).join('\n'));
  return parsed.data;
}
