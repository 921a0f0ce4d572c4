import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError, SchemaError } from '../../core/errors.js';
import { stripBom } from '../../core/jsonl-file.js';
import { jsonPath } from '../../core/trajectory.js';

/**
 * Question sets in Humanity's Last Exam's format (`cais/hle`, one record per question): `id`, `question`, `answer`,
 * `answer_type` (`exactMatch` or `multipleChoice`; `exact_match`, `exact-match`, `multiple_choice` and
 * `multiple-choice` are read too), and optionally `category`, `raw_subject`, `rationale` and `image` (a data URI or
 * URL; `""` or absent when the question has none). Other fields (HLE's `author_name`, `canary`, `image_preview`,
 * `rationale_image`) are ignored.
 *
 * Files are JSONL (one record per line: `.jsonl`, `.ndjson`) or JSON (an array of records: `.json`; another
 * extension is read by its first character). A record that does not fit is reported as `file:line $.field: what is
 * wrong`, every one of them, not only the first; ids must be unique. Questions with an image are left out, and
 * counted, unless the reader declares image input.
 */

/** HLE's answer types. */
export type AnswerType = 'exactMatch' | 'multipleChoice';

/** One question. */
export interface Question {
  id: string;
  question: string;
  /** The reference answer (a letter for most multiple-choice questions). */
  answer: string;
  answerType: AnswerType;
  category?: string;
  rawSubject?: string;
  rationale?: string;
  /** The question's image (a data URI or URL), when it has one and image input is declared. */
  image?: string;
  /** Where it was read: `file:line`. */
  place: string;
}

/** A file's questions. */
export interface QuestionSet {
  /** The file, resolved. */
  file: string;
  questions: Question[];
  /** Questions with an image, left out because image input was not declared. */
  skippedImages: number;
}

const ANSWER_TYPES: Record<string, AnswerType> = {
  exactMatch: 'exactMatch',
  exact_match: 'exactMatch',
  'exact-match': 'exactMatch',
  multipleChoice: 'multipleChoice',
  multiple_choice: 'multipleChoice',
  'multiple-choice': 'multipleChoice',
};

const text = (what: string) => z.string({ error: (i) => (i.input === undefined ? `missing: every question needs ${what}` : `expected a string (${what})`) });

const RecordSchema = z
  .object({
    id: text('an id').min(1, 'must not be empty'),
    question: text('the question text').min(1, 'must not be empty'),
    answer: text('the reference answer').min(1, 'must not be empty'),
    answer_type: text('answer_type: exactMatch or multipleChoice').refine((t) => t in ANSWER_TYPES, {
      error: (i) => `expected exactMatch or multipleChoice (HLE's answer types), got ${JSON.stringify(i.input)}`,
    }),
    category: z.string().nullish(),
    raw_subject: z.string().nullish(),
    rationale: z.string().nullish(),
    image: z.string().nullish(),
  })
  .loose();

/** How {@link parseQuestions} reads. */
export interface ReadOptions {
  /** Keep questions with an image (the policy takes image input). Default false: they are left out and counted. */
  imageInput?: boolean;
}

/** Problems listed in one error at most; the rest are counted. */
const MAX_LISTED = 20;

/**
 * The questions of `content`, read from `file` (named in errors; its extension picks the format).
 *
 * @throws SchemaError listing every record that does not fit, as `file:line $.field: message`.
 */
export function parseQuestions(content: string, file: string, options: ReadOptions = {}): QuestionSet {
  const body = stripBom(content);
  const records = isJsonArrayFile(file, body) ? jsonArrayRecords(body, file) : jsonlRecords(body);
  const problems: string[] = [];
  const questions: Question[] = [];
  const seen = new Map<string, string>();
  let skippedImages = 0;
  for (const r of records) {
    if ('error' in r) {
      problems.push(`${file}:${r.line} ${r.error}`);
      continue;
    }
    const parsed = RecordSchema.safeParse(r.value);
    const place = `${file}:${r.line}`;
    if (!parsed.success) {
      const at = r.at;
      for (const issue of parsed.error.issues) {
        const message = issue.code === 'invalid_type' && issue.path.length === 0 ? `expected a JSON object (one question), got ${describe(r.value)}` : issue.message;
        problems.push(`${place} ${jsonPath([...at, ...issue.path])}: ${message}`);
      }
      continue;
    }
    const q = parsed.data;
    const earlier = seen.get(q.id);
    if (earlier !== undefined) {
      problems.push(`${place} ${jsonPath([...r.at, 'id'])}: duplicate id ${JSON.stringify(q.id)} (first at ${earlier})`);
      continue;
    }
    seen.set(q.id, place);
    const image = q.image ?? '';
    if (image !== '' && options.imageInput !== true) {
      skippedImages++;
      continue;
    }
    questions.push({
      id: q.id,
      question: q.question,
      answer: q.answer,
      answerType: ANSWER_TYPES[q.answer_type] as AnswerType,
      ...(q.category ? { category: q.category } : {}),
      ...(q.raw_subject ? { rawSubject: q.raw_subject } : {}),
      ...(q.rationale ? { rationale: q.rationale } : {}),
      ...(image !== '' ? { image } : {}),
      place,
    });
  }
  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_LISTED);
    if (problems.length > MAX_LISTED) listed.push(`… and ${problems.length - MAX_LISTED} more problems`);
    throw new SchemaError(`${file}: not a question set in HLE's format:\n${listed.join('\n')}`, listed);
  }
  if (records.length === 0) throw new SchemaError(`${file}: no questions (expected HLE-format records: id, question, answer, answer_type)`, []);
  return { file, questions, skippedImages };
}

/** What a cached read was made from: the file's identity and the options. */
const cache = new Map<string, { key: string; set: QuestionSet }>();

/**
 * The questions of a file (see {@link parseQuestions}), read once per process while the file is unchanged (size and
 * modification time) — every environment instance of an evaluation shares the read.
 *
 * @throws ConfigError naming the file when it cannot be read; SchemaError for records that do not fit.
 */
export function loadQuestions(file: string, options: ReadOptions = {}): QuestionSet {
  const path = resolve(file);
  let stamp: string;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new ConfigError(`${file}: not a file (expected a question set in HLE's format, JSON or JSONL)`);
    stamp = `${st.size}:${st.mtimeMs}`;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${file}: cannot read the question set (${(err as Error).message})`);
  }
  const cacheKey = `${path}\0${options.imageInput === true}`;
  const hit = cache.get(cacheKey);
  if (hit?.key === stamp) return hit.set;
  const set = parseQuestions(readFileSync(path, 'utf8'), file, options);
  cache.set(cacheKey, { key: stamp, set });
  return set;
}

type RawRecord = { line: number; at: (string | number)[]; value: unknown } | { line: number; error: string };

function isJsonArrayFile(file: string, body: string): boolean {
  const lower = file.toLowerCase();
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return false;
  if (lower.endsWith('.json')) return true;
  return body.trimStart().startsWith('[');
}

function jsonlRecords(body: string): RawRecord[] {
  const out: RawRecord[] = [];
  body.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push({ line: i + 1, at: [], value: JSON.parse(line) as unknown });
    } catch (err) {
      out.push({ line: i + 1, error: `$: not valid JSON (${(err as Error).message}); a JSONL question set has one JSON object per line` });
    }
  });
  return out;
}

function jsonArrayRecords(body: string, file: string): RawRecord[] {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    throw new SchemaError(`${file}: not valid JSON (${(err as Error).message}); expected an array of questions (or a .jsonl file, one question per line)`, []);
  }
  if (!Array.isArray(value)) throw new SchemaError(`${file}:1 $: expected a JSON array of questions, got ${describe(value)}`, []);
  const lines = elementLines(body);
  return value.map((v, i) => ({ line: lines[i] ?? 1, at: [i], value: v as unknown }));
}

/**
 * The line each element of a JSON document's top-level array starts on (the document already parsed, so it is valid
 * JSON): a scan that tracks strings and nesting.
 */
export function elementLines(body: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectValue = false;
  for (const ch of body) {
    if (ch === '\n') line++;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n') continue;
    if (depth === 1 && expectValue && ch !== ']') {
      lines.push(line);
      expectValue = false;
    }
    if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') {
      depth++;
      if (depth === 1) expectValue = true;
    } else if (ch === ']' || ch === '}') depth--;
    else if (ch === ',' && depth === 1) expectValue = true;
  }
  return lines;
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}
