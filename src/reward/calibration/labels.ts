import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { SchemaError } from '../../core/errors.js';
import { stripBom } from '../../core/jsonl-file.js';
import { formatZodIssues, parseJsonlLines } from '../../core/trajectory.js';

/**
 * Human labels: one JSON object per line, `{ "trajectoryId": "sha256:…", "stepIndex": 3, "score": 0.8 }`.
 * Without `stepIndex` the label grades the whole trajectory. `score` is on whatever scale the annotators
 * used (0–1, 1–5, …): the calibration maps automatic scores onto that scale.
 */

const finite = z.number().refine(Number.isFinite, { message: 'expected a finite number' });

/**
 * One human label line. Unknown keys are rejected (a typo such as `stepindex` would otherwise silently
 * turn a step label into a trajectory label); `annotator` and `comment` are accepted and ignored by the fit.
 */
export const HumanLabelSchema = z
  .object({
    trajectoryId: z.string().min(1),
    stepIndex: z.number().int().nonnegative().optional(),
    score: finite,
    annotator: z.string().optional(),
    comment: z.string().optional(),
  })
  .strict();

/** A validated human label. */
export type HumanLabel = z.infer<typeof HumanLabelSchema>;

/** Validates one label value; `place` (`labels.jsonl:4`) prefixes every problem. */
export function parseHumanLabel(value: unknown, place: string): HumanLabel {
  const r = HumanLabelSchema.safeParse(value);
  if (!r.success) {
    const issues = formatZodIssues(r.error, place);
    throw new SchemaError(issues.join('\n'), issues);
  }
  return r.data;
}

/**
 * Parses labels JSONL text. Every bad line is collected; if there is any, throws one {@link SchemaError}
 * whose `issues` name `file:line $.path: problem` for each.
 */
export function parseHumanLabels(text: string, file: string): HumanLabel[] {
  const labels: HumanLabel[] = [];
  const issues: string[] = [];
  for (const rec of parseJsonlLines(stripBom(text).split(/\r?\n/), file, parseHumanLabel)) {
    if (rec.ok) labels.push(rec.value);
    else issues.push(...rec.errors);
  }
  if (issues.length > 0) throw new SchemaError(`${file}: ${issues.length} invalid label line(s):\n${issues.join('\n')}`, issues);
  return labels;
}

/** Reads and validates a labels JSONL file (see {@link parseHumanLabels}). */
export async function readHumanLabels(path: string): Promise<HumanLabel[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new SchemaError(`${path}: cannot read labels: ${(err as Error).message}`);
  }
  return parseHumanLabels(text, path);
}
