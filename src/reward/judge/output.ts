import { z } from 'zod';
import { jsonPath } from '../../core/trajectory.js';
import type { RubricDefinition, RubricResult } from '../types.js';

/**
 * The judge's structured output: one object per rubric, `{ "rationale": string, "score": number in [0, 1] }`.
 * The JSON Schema sent to the provider (tool input schema / `response_format`) and the zod schema that
 * validates the reply describe the same shape. The JSON Schema is in the subset OpenAI's strict mode
 * and vLLM's guided decoding accept (every property required, no additional properties, no numeric
 * bounds); the [0, 1] range is enforced by zod, and a violation triggers the repair retry.
 */

/** Name of the Anthropic tool / OpenAI schema the judge fills in. */
export const JUDGE_OUTPUT_NAME = 'record_scores';

/** JSON Schema of the verdict for a rubric set. */
export function judgeJsonSchema(rubrics: readonly RubricDefinition[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const r of rubrics) {
    properties[r.name] = {
      type: 'object',
      description: r.description,
      properties: {
        rationale: { type: 'string', description: 'One or two sentences citing the evidence.' },
        score: { type: 'number', description: 'Between 0 and 1; 1 is best.' },
      },
      required: ['rationale', 'score'],
      additionalProperties: false,
    };
  }
  return { type: 'object', properties, required: rubrics.map((r) => r.name), additionalProperties: false };
}

/**
 * The zod schema of the verdict. Unknown top-level keys are dropped (a model adding an "overall" score
 * is not worth a repair); a missing rationale is tolerated; a missing rubric or a score outside [0, 1]
 * is invalid.
 */
export function judgeOutputSchema(rubrics: readonly RubricDefinition[]): z.ZodType<Record<string, RubricResult>> {
  const verdict = z.object({
    rationale: z.string().optional(),
    score: z.number().min(0).max(1),
  });
  const shape: Record<string, typeof verdict> = {};
  for (const r of rubrics) shape[r.name] = verdict;
  return z.object(shape).transform((v) => {
    const out: Record<string, RubricResult> = {};
    for (const r of rubrics) {
      const got = v[r.name];
      if (!got) continue;
      out[r.name] = got.rationale !== undefined && got.rationale !== '' ? { score: got.score, rationale: got.rationale } : { score: got.score };
    }
    return out;
  });
}

/** A parsed verdict, or why the reply is invalid (the text sent back in the repair request). */
export type ParsedVerdict = { ok: true; value: Record<string, RubricResult> } | { ok: false; error: string };

/**
 * Extracts a JSON value from model text: the whole text, else the inside of a ```json fence, else the
 * span from the first `{` to the last `}` (models sometimes wrap JSON in prose).
 */
export function extractJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const candidates = [text.trim()];
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fence?.[1] !== undefined) candidates.push(fence[1].trim());
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  let firstError = '';
  for (const c of candidates) {
    try {
      return { ok: true, value: JSON.parse(c) as unknown };
    } catch (err) {
      if (firstError === '') firstError = (err as Error).message;
    }
  }
  return { ok: false, error: text.trim() === '' ? 'the reply was empty' : `the reply is not valid JSON (${firstError})` };
}

/** Validates a reply: a structured value (tool input) or text to parse. */
export function parseVerdict(reply: { value?: unknown; text: string }, rubrics: readonly RubricDefinition[]): ParsedVerdict {
  let value = reply.value;
  if (value === undefined) {
    const extracted = extractJson(reply.text);
    if (!extracted.ok) return extracted;
    value = extracted.value;
  }
  const r = judgeOutputSchema(rubrics).safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, error: r.error.issues.map((i) => `${jsonPath(i.path)}: ${i.message}`).join('; ') };
}
