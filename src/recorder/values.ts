/**
 * Small readers for untyped JSON from foreign logs. Adapters read logs through these instead of casting,
 * so a missing or odd field degrades to `undefined` rather than a crash.
 */

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The value when it is a string. */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The value when it is a finite number. */
export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** The value when it is an array, else an empty array. */
export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The value when it is an object, else an empty object. */
export function rec(value: unknown): JsonObject {
  return isRecord(value) ? value : {};
}

/**
 * The text of a chat message `content`: a string as is; for a list of content blocks (OpenAI parts,
 * Anthropic blocks, tool_result content) the `text` of the text blocks joined by newlines. Anything else
 * (null, images only) gives `''`.
 */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block === 'string') parts.push(block);
    else if (isRecord(block)) {
      if (typeof block.text === 'string' && (block.type === undefined || block.type === 'text')) parts.push(block.text);
      else if (block.type === 'tool_result') parts.push(contentText(block.content));
    }
  }
  return parts.join('\n');
}

/** The content blocks that are not text (images, documents…), which adapters keep in metadata. */
export function nonTextBlocks(content: unknown): unknown[] {
  if (!Array.isArray(content)) return [];
  return content.filter((b) => isRecord(b) && b.type !== undefined && b.type !== 'text' && b.type !== 'tool_result');
}

/** Tool-call arguments as an object, with a note when they had to be kept in a degraded form. */
export interface ParsedArguments {
  params: JsonObject;
  /** Set when the arguments were not a JSON object; `params` then holds `{ arguments: <raw> }`. */
  warning?: string;
}

/**
 * Parses tool-call arguments: a JSON string (OpenAI `function.arguments`), an object (Anthropic `input`),
 * or absent (`{}`). Arguments that are not a JSON object are kept whole under `params.arguments`.
 */
export function parseToolArguments(raw: unknown): ParsedArguments {
  if (raw === undefined || raw === null || raw === '') return { params: {} };
  if (isRecord(raw)) return { params: raw };
  if (typeof raw === 'string') {
    try {
      const value = JSON.parse(raw) as unknown;
      if (isRecord(value)) return { params: value };
      return { params: { arguments: value }, warning: 'tool arguments are JSON but not an object; kept under params.arguments' };
    } catch (err) {
      return { params: { arguments: raw }, warning: `tool arguments are not valid JSON (${(err as Error).message}); kept as a string under params.arguments` };
    }
  }
  return { params: { arguments: raw }, warning: 'tool arguments are neither an object nor a JSON string; kept under params.arguments' };
}

/**
 * An ISO-8601 UTC timestamp from a log's time value: an ISO string (a time without an offset is taken as
 * UTC, as OpenHands writes them), or a Unix time in seconds (or milliseconds when above 1e12).
 */
export function toIsoTimestamp(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
    const ms = value > 1e12 ? value : value * 1000;
    const d = new Date(ms);
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  }
  if (typeof value === 'string' && value.trim() !== '') {
    const s = value.trim();
    const naive = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s);
    const d = new Date(naive ? `${s}Z` : s);
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  }
  return undefined;
}

/** Milliseconds from `start` to `end` (ISO strings), never negative; undefined when either is missing. */
export function elapsedMs(start: string | undefined, end: string | undefined): number | undefined {
  if (start === undefined || end === undefined) return undefined;
  return Math.max(0, Date.parse(end) - Date.parse(start));
}

/** The first line of a text, cut to `max` characters: short error messages from long observations. */
export function firstLine(text: string, max = 300): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Joins the non-blank, trimmed parts with a blank line; undefined when nothing is left. */
export function joinText(parts: readonly (string | undefined)[]): string | undefined {
  const kept = parts.map((p) => (p ?? '').trim()).filter((p) => p !== '');
  return kept.length > 0 ? kept.join('\n\n') : undefined;
}

/** A copy of `obj` without the given keys (for keeping "everything else" in metadata). */
export function omitKeys(obj: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** The file name without directory and without the given extensions (longest first). */
export function baseName(path: string, extensions: readonly string[]): string {
  const name = path.split(/[\\/]/).pop() ?? path;
  for (const ext of [...extensions].sort((a, b) => b.length - a.length)) {
    if (name.toLowerCase().endsWith(ext.toLowerCase()) && name.length > ext.length) return name.slice(0, -ext.length);
  }
  return name;
}
