import { open, readFile } from 'node:fs/promises';
import { anyJson, streamJsonl } from '../core/jsonl-file.js';
import { parseYamlText } from '../core/yaml.js';
import type { ConversionItem, ConversionProblem, ConvertContext } from './adapter.js';
import { isConversionProblem, problem } from './adapter.js';
import { jsonlProblem } from './jsonl.js';

/**
 * Document reading for formats that store one episode per document (SWE-agent `.traj`, mini-swe-agent
 * `.traj.json`, OpenHands event arrays and evaluation outputs, VCR cassettes). A file holds one such
 * document, read at once (it is as large as one episode), or is JSONL with one document per line: then it
 * is streamed line by line ({@link readDocuments}), never parsed as one document, and a line that is not
 * JSON is reported with its own number while the other lines convert.
 */

/** A parsed document, or the problem that stopped it. */
export type DocumentResult = { ok: true; value: unknown } | { ok: false; problem: ConversionProblem };

/** One document of a file, with its line when the file is JSONL; or the problem that stopped it. */
export type DocumentItem = { ok: true; value: unknown; line?: number } | { ok: false; problem: ConversionProblem };

/** File names that say JSONL whatever the content. */
const JSONL_NAME = /\.(jsonl|ndjson)$/i;

/** Bytes read at a time while looking at a file's first line. */
const SNIFF_CHUNK = 64 * 1024;

/**
 * Whether a file is JSONL: named `*.jsonl` or `*.ndjson`, or its first non-blank line is a whole JSON value
 * on its own and something other than blank lines follows it. A pretty-printed document opens with a line
 * that is not a whole value (`{`), and a document on one line has nothing after it, so both stay documents.
 * Reads the file up to the end of its first line (however long) and the start of the next non-blank one.
 */
export async function isJsonlFile(path: string): Promise<boolean> {
  if (JSONL_NAME.test(path)) return true;
  const handle = await open(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(SNIFF_CHUNK);
    const pieces: Buffer[] = [];
    let started = false; // inside the first non-blank line
    let ended = false; // past its end
    let first = true;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, SNIFF_CHUNK, null);
      if (bytesRead === 0) return false;
      let piece = chunk.subarray(0, bytesRead);
      // A byte-order mark (editors on Windows write one) is not content.
      if (first && piece[0] === 0xef && piece[1] === 0xbb && piece[2] === 0xbf) piece = piece.subarray(3);
      first = false;
      if (!ended) {
        if (!started) {
          const at = firstNonBlank(piece);
          if (at < 0) continue;
          started = true;
          piece = piece.subarray(at);
        }
        const newline = piece.indexOf(10);
        if (newline < 0) {
          pieces.push(Buffer.from(piece));
          continue;
        }
        pieces.push(Buffer.from(piece.subarray(0, newline)));
        ended = true;
        if (!isJsonValue(Buffer.concat(pieces).toString('utf8'))) return false;
        piece = piece.subarray(newline + 1);
      }
      if (firstNonBlank(piece) >= 0) return true;
    }
  } finally {
    await handle.close();
  }
}

/** The offset of the first byte that is not JSON whitespace, or -1. */
function firstNonBlank(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return i;
  }
  return -1;
}

function isJsonValue(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The JSON documents of a file: the whole file as one ({@link readJsonDocument}), or, for a JSONL file
 * ({@link isJsonlFile}), each non-blank line, streamed, with its line number. A line that is not JSON becomes
 * a problem naming that line, and the lines after it go on.
 */
export async function* readJsonDocuments(path: string, file: string): AsyncGenerator<DocumentItem> {
  yield* readDocuments(path, file, readJsonDocument);
}

/** {@link readJsonDocuments} for YAML formats: a JSONL file is still read line by line (JSON is YAML). */
export async function* readYamlDocuments(path: string, file: string): AsyncGenerator<DocumentItem> {
  yield* readDocuments(path, file, readYamlDocument);
}

async function* readDocuments(path: string, file: string, readWhole: (path: string, file: string) => Promise<DocumentResult>): AsyncGenerator<DocumentItem> {
  let jsonl: boolean;
  try {
    jsonl = await isJsonlFile(path);
  } catch (err) {
    yield { ok: false, problem: problem(file, '$', `cannot read file (${(err as Error).message})`) };
    return;
  }
  if (!jsonl) {
    yield await readWhole(path, file);
    return;
  }
  try {
    for await (const record of streamJsonl(path, file, anyJson)) {
      if (record.ok) yield { ok: true, value: record.value, line: record.line };
      else for (const message of record.errors) yield { ok: false, problem: jsonlProblem(file, record.line, message) };
    }
  } catch (err) {
    yield { ok: false, problem: problem(file, '$', `cannot read file (${(err as Error).message})`) };
  }
}

/**
 * Converts every document of a file ({@link readJsonDocuments}, or {@link readYamlDocuments} with `yaml`)
 * with `convertDocument`. For a line of a JSONL file, the problems that name no line get the document's, and
 * the trajectories' `metadata.source.line` is set, so each points at its own line.
 */
export async function* convertDocuments(
  path: string,
  ctx: ConvertContext,
  convertDocument: (value: unknown, line: number | undefined) => Iterable<ConversionItem> | AsyncIterable<ConversionItem>,
  options: { yaml?: boolean } = {},
): AsyncGenerator<ConversionItem> {
  const documents = options.yaml ? readYamlDocuments(path, ctx.file) : readJsonDocuments(path, ctx.file);
  for await (const doc of documents) {
    if (!doc.ok) {
      yield doc.problem;
      continue;
    }
    const line = doc.line;
    for await (const item of convertDocument(doc.value, line)) {
      if (line !== undefined) {
        if (isConversionProblem(item)) item.line ??= line;
        else {
          const source = item.metadata.source;
          if (source !== null && typeof source === 'object' && !Array.isArray(source)) (source as Record<string, unknown>).line ??= line;
        }
      }
      yield item;
    }
  }
}

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
  const parsed = parseYamlText(text);
  if (!parsed.ok) return { ok: false, problem: problem(file, '$', `invalid YAML (${parsed.message})`, { line: parsed.line }) };
  return { ok: true, value: parsed.value };
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
