import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import type { ConversionProblem } from './adapter.js';
import { problem } from './adapter.js';

/**
 * Whole-document reading for formats that store one episode per file (SWE-agent `.traj`, mini-swe-agent
 * `.traj.json`, OpenHands event arrays, VCR cassettes). Such files are as large as one episode, so they
 * are read at once; JSONL formats never come through here (see `jsonl.ts`).
 */

/** A parsed document, or the problem that stopped it. */
export type DocumentResult = { ok: true; value: unknown } | { ok: false; problem: ConversionProblem };

/** Reads and parses a JSON file; a syntax error is reported with its line when the engine gives a position. */
export async function readJsonDocument(path: string, file: string): Promise<DocumentResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return { ok: false, problem: problem(file, '$', `cannot read file (${(err as Error).message})`) };
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    const message = (err as Error).message;
    return { ok: false, problem: problem(file, '$', `invalid JSON (${message})`, { line: jsonErrorLine(text, message) }) };
  }
}

/** Reads and parses a YAML file (YAML 1.2 core schema: no implicit dates, so values stay JSON-like). */
export async function readYamlDocument(path: string, file: string): Promise<DocumentResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return { ok: false, problem: problem(file, '$', `cannot read file (${(err as Error).message})`) };
  }
  const doc = parseDocument(text);
  const first = doc.errors[0];
  if (first) {
    const message = first.message.split('\n', 1)[0] ?? first.message;
    return { ok: false, problem: problem(file, '$', `invalid YAML (${message})`, { line: first.linePos?.[0]?.line }) };
  }
  return { ok: true, value: doc.toJS({ maxAliasCount: 1000 }) as unknown };
}

/**
 * The 1-based line of a `JSON.parse` error: from "line N" (Node 22) or "position N" in the message, else
 * (Node 20 often gives neither) from {@link jsonSyntaxErrorOffset}.
 */
export function jsonErrorLine(text: string, message: string): number | undefined {
  const byLine = /\(line (\d+) column \d+\)/.exec(message);
  if (byLine?.[1]) return Number(byLine[1]);
  const byPosition = /position (\d+)/.exec(message);
  const offset = byPosition?.[1] !== undefined ? Number(byPosition[1]) : jsonSyntaxErrorOffset(text);
  if (offset === undefined) return undefined;
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i += 1) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}

/**
 * The offset of the first JSON syntax error in `text` (undefined when it is valid JSON). A small
 * iterative scanner, used only after `JSON.parse` failed, to say where.
 */
export function jsonSyntaxErrorOffset(text: string): number | undefined {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\r\n'.includes(text.charAt(i))) i += 1;
  };
  const literal = (): boolean => {
    const c = text.charAt(i);
    if (c === '"') {
      i += 1;
      while (i < text.length) {
        const d = text.charAt(i);
        if (d === '"') {
          i += 1;
          return true;
        }
        if (d === '\\') i += 1;
        else if (d < ' ') return false;
        i += 1;
      }
      return false;
    }
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) return false;
    i += m[0].length;
    return true;
  };
  // Each frame is the container we are in: after a value we expect ',' or its closer.
  const stack: ('[' | '{')[] = [];
  let expectValue = true;
  for (;;) {
    ws();
    if (expectValue) {
      const c = text.charAt(i);
      if (c === '[' || c === '{') {
        stack.push(c);
        i += 1;
        ws();
        const close = c === '[' ? ']' : '}';
        if (text.charAt(i) === close) {
          stack.pop();
          i += 1;
          expectValue = false;
          continue;
        }
        if (c === '{') {
          if (!literal() || text.charAt(i - 1) !== '"') return i;
          ws();
          if (text.charAt(i) !== ':') return i;
          i += 1;
        }
        continue;
      }
      if (!literal()) return i;
      expectValue = false;
      continue;
    }
    const top = stack[stack.length - 1];
    if (top === undefined) return i < text.length ? i : undefined;
    const c = text.charAt(i);
    if (c === ',') {
      i += 1;
      if (top === '{') {
        ws();
        if (text.charAt(i) !== '"' || !literal()) return i;
        ws();
        if (text.charAt(i) !== ':') return i;
        i += 1;
      }
      expectValue = true;
    } else if ((top === '[' && c === ']') || (top === '{' && c === '}')) {
      stack.pop();
      i += 1;
    } else {
      return i;
    }
  }
}
