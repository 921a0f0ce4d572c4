import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import type { Prediction } from './harness.js';

/** One prediction as SWE-bench's harness reads it. */
export const PredictionSchema = z.looseObject({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().min(1),
  model_patch: z.string().nullable(),
});

function parse(raw: unknown, where: string): Prediction {
  const r = PredictionSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    const path = issue?.path.length ? `$.${issue.path.join('.')}` : '$';
    const message = issue?.code === 'invalid_type' && valueAt(raw, issue.path) === undefined ? 'missing' : (issue?.message ?? 'invalid prediction');
    throw new ConfigError(`${where} ${path}: ${message}`);
  }
  return { instance_id: r.data.instance_id, model_name_or_path: r.data.model_name_or_path, model_patch: r.data.model_patch };
}

/**
 * Reads predictions in SWE-bench's format — `{instance_id, model_name_or_path, model_patch}` — from JSON lines, a
 * JSON array, or a JSON object keyed by instance id. Errors name the file, the line (or index, or key) and the
 * field; an instance predicted twice is an error.
 */
export function loadPredictions(file: string): Prediction[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: cannot read the predictions file: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
  }
  const out: { p: Prediction; where: string }[] = [];
  const head = text.trimStart()[0];
  if (head === '[' || (head === '{' && !text.trim().includes('\n'))) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`${file}: not JSON: ${(err as Error).message}`);
    }
    if (Array.isArray(data)) data.forEach((raw, i) => out.push({ p: parse(raw, `${file}[${i}]`), where: `${file}[${i}]` }));
    else if (data !== null && typeof data === 'object' && !('instance_id' in data)) {
      for (const [k, raw] of Object.entries(data)) out.push({ p: parse(raw, `${file}[${JSON.stringify(k)}]`), where: `${file}[${JSON.stringify(k)}]` });
    } else out.push({ p: parse(data, `${file}:1`), where: `${file}:1` });
  } else {
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (err) {
        throw new ConfigError(`${file}:${i + 1}: not JSON: ${(err as Error).message}`);
      }
      out.push({ p: parse(raw, `${file}:${i + 1}`), where: `${file}:${i + 1}` });
    });
  }
  const seen = new Map<string, string>();
  for (const { p, where } of out) {
    const first = seen.get(p.instance_id);
    if (first !== undefined) throw new ConfigError(`${where} $.instance_id: '${p.instance_id}' is predicted twice (first at ${first})`);
    seen.set(p.instance_id, where);
  }
  if (out.length === 0) throw new ConfigError(`${file}: no predictions`);
  return out.map((x) => x.p);
}

/** The value at a schema issue's path in the raw input (undefined when absent). */
function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = raw;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}
