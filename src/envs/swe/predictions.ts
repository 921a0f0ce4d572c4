import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import type { Prediction } from './harness.js';
import { firstIssue, loadJsonRecords } from './json-records.js';

/** One prediction as SWE-bench's harness reads it. */
export const PredictionSchema = z.looseObject({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().min(1),
  model_patch: z.string().nullable(),
});

function parse(raw: unknown, where: string): Prediction {
  const r = PredictionSchema.safeParse(raw);
  if (!r.success) throw new ConfigError(`${where} ${firstIssue(r.error, raw, 'invalid prediction')}`);
  return { instance_id: r.data.instance_id, model_name_or_path: r.data.model_name_or_path, model_patch: r.data.model_patch };
}

/**
 * Reads predictions in SWE-bench's format — `{instance_id, model_name_or_path, model_patch}` — from JSON lines, a
 * JSON array, or a JSON object keyed by instance id. Errors name the file, the line (or index, or key) and the
 * field; an instance predicted twice is an error.
 */
export function loadPredictions(file: string): Prediction[] {
  return loadJsonRecords(file, {
    noun: 'predictions',
    error: ConfigError,
    parse,
    id: (p) => p.instance_id,
    duplicate: (id, first) => `'${id}' is predicted twice (first at ${first})`,
    objects: true,
  });
}
