import { readFileSync } from 'node:fs';
import type { z } from 'zod';

/** How {@link loadJsonRecords} reads one kind of record file. */
export interface JsonRecordsOptions<T> {
  /** What the file holds, plural, for messages: `cannot read the ${noun} file`, `no ${noun}`. */
  noun: string;
  /** The error class thrown (its constructor takes the message). */
  error: new (message: string) => Error;
  /** Parses one record; `where` is its place (`file:line`, `file[index]`, `file["key"]`). */
  parse: (raw: unknown, where: string) => T;
  /** A record's `instance_id`: two records with one id are an error. */
  id: (record: T) => string;
  /** The message of a second record with `id` (after `${where} $.instance_id: `); `first` is the first one's place. */
  duplicate: (id: string, first: string) => string;
  /**
   * Also accept a whole file that is one JSON object on one line: one record when it has an `instance_id`,
   * else an object of records keyed by id (as SWE-bench's predictions may be written).
   */
  objects?: boolean;
}

/**
 * Reads the records of a JSON-lines file (one per line) or a JSON array, in order. Every error names the file, the
 * line (or array index, or key) and what is wrong: `swe.jsonl:3: not JSON: …`, `swe.jsonl:5 $.instance_id: duplicate
 * 'x' (first at swe.jsonl:1)`, `swe.jsonl: no instances`.
 */
export function loadJsonRecords<T>(file: string, o: JsonRecordsOptions<T>): T[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new o.error(`${file}: cannot read the ${o.noun} file: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'is a directory' : (err as Error).message}`);
  }
  const out: { record: T; where: string }[] = [];
  const add = (raw: unknown, where: string): void => {
    out.push({ record: o.parse(raw, where), where });
  };
  const head = text.trimStart()[0];
  if (head === '[' || (o.objects === true && head === '{' && !text.trim().includes('\n'))) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new o.error(`${file}: not JSON: ${(err as Error).message}`);
    }
    if (Array.isArray(data)) data.forEach((raw, i) => add(raw, `${file}[${i}]`));
    else if (data !== null && typeof data === 'object' && !('instance_id' in data)) {
      for (const [k, raw] of Object.entries(data)) add(raw, `${file}[${JSON.stringify(k)}]`);
    } else add(data, `${file}:1`);
  } else {
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (err) {
        throw new o.error(`${file}:${i + 1}: not JSON: ${(err as Error).message}`);
      }
      add(raw, `${file}:${i + 1}`);
    });
  }
  const seen = new Map<string, string>();
  for (const { record, where } of out) {
    const id = o.id(record);
    const first = seen.get(id);
    if (first !== undefined) throw new o.error(`${where} $.instance_id: ${o.duplicate(id, first)}`);
    seen.set(id, where);
  }
  if (out.length === 0) throw new o.error(`${file}: no ${o.noun}`);
  return out.map((x) => x.record);
}

/**
 * The first issue of a failed parse of `raw`, as `$.path: message` — `missing` where the field is absent, rather
 * than zod's `expected string, received undefined`.
 */
export function firstIssue(error: z.ZodError, raw: unknown, fallback: string): string {
  const issue = error.issues[0];
  const path = issue?.path.length ? `$.${issue.path.join('.')}` : '$';
  const message = issue?.code === 'invalid_type' && valueAt(raw, issue.path) === undefined ? 'missing' : (issue?.message ?? fallback);
  return `${path}: ${message}`;
}

/** The value at a schema issue's path in the raw input (undefined when absent). */
function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = raw;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}
