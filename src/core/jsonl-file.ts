import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { parseJsonlLines, type JsonlRecord } from './trajectory.js';

/**
 * Line-by-line reading of JSONL files. Nothing here holds more than one line in memory, so a 1 GB log
 * streams through in constant space.
 */

/** `text` without a leading UTF-8 byte-order mark (editors on Windows write one). */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Bytes {@link readLines} reads at a time. */
const READ_CHUNK_BYTES = 1 << 20;

/**
 * Yields the lines of a text file, without their terminators: a line ends at \n, \r\n or a lone \r (as
 * `readline` splits them, and {@link splitLines}). A UTF-8 byte-order mark on the first line is dropped, and bytes
 * that are not UTF-8 become U+FFFD. Breaking out of the loop closes the file.
 *
 * The file is read in chunks of `chunkBytes` (1 MiB; the next one is read while this one's lines are consumed)
 * and cut at its \n bytes (which UTF-8 never uses inside a character), so each line is decoded once, whole: a
 * line costs a search for its end and one decode, against `readline`'s decoder, regular-expression split and
 * events (3–5× the time on large JSONL files).
 */
export async function* readLines(path: string, options: { chunkBytes?: number } = {}): AsyncGenerator<string> {
  const size = options.chunkBytes ?? READ_CHUNK_BYTES;
  const handle = await open(path, 'r');
  // Two buffers: the next chunk is read while the lines of this one are consumed.
  const buffers = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
  let which = 0;
  let pending: Promise<{ bytesRead: number }> | undefined = handle.read(buffers[0] as Buffer, 0, size, null);
  try {
    // The start of the current line, read in earlier chunks (copied: the buffers are reused).
    let carry: Buffer[] = [];
    let first = true;
    for (;;) {
      const { bytesRead } = await (pending as Promise<{ bytesRead: number }>);
      pending = undefined;
      if (bytesRead === 0) break;
      const bytes = (buffers[which] as Buffer).subarray(0, bytesRead);
      which = 1 - which;
      pending = handle.read(buffers[which] as Buffer, 0, size, null);
      let start = 0;
      for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
        let segment = bytes.subarray(start, nl);
        if (carry.length > 0) {
          carry.push(segment);
          segment = Buffer.concat(carry);
          carry = [];
        }
        start = nl + 1;
        for (const line of segmentLines(segment, first)) yield line;
        first = false;
      }
      if (start < bytesRead) carry.push(Buffer.from(bytes.subarray(start)));
    }
    if (carry.length > 0) for (const line of segmentLines(Buffer.concat(carry), first)) yield line;
  } finally {
    // A read still in flight (the consumer stopped early) must finish before the file closes.
    await pending?.catch(() => undefined);
    await handle.close();
  }
}

/**
 * The lines of the bytes between two \n (or a file's last bytes): one line, unless they hold a \r, which ends a
 * line too (the \r of a \r\n, or of the file's end, only ends the one before it).
 */
function segmentLines(segment: Buffer, first: boolean): string[] {
  let end = segment.length;
  if (end > 0 && segment[end - 1] === 13) end--;
  const cr = segment.indexOf(13);
  if (cr < 0 || cr >= end) {
    const text = segment.toString('utf8', 0, end);
    return [first ? stripBom(text) : text];
  }
  const lines = segment.toString('utf8', 0, end).split('\r');
  if (first) lines[0] = stripBom(lines[0] as string);
  return lines;
}

/** Decodes UTF-8 as `readLines` does (bad bytes become U+FFFD), leaving a byte-order mark to the caller. */
const DECODER = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The lines of whole lines of a file given as bytes (every line but the file's last ends in a line break), as
 * {@link readLines} yields them: split at \n, \r\n and a lone \r, without the terminators, and a byte-order mark
 * dropped when `first` (the bytes begin the file).
 */
export function splitLines(bytes: Uint8Array, first: boolean): string[] {
  const text = DECODER.decode(bytes);
  const lines = (first ? stripBom(text) : text).split(/\r\n|\r|\n/);
  // Text that ends in a line break (or is empty) leaves an empty string after the last one.
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The line breaks in `bytes`, as {@link splitLines} and {@link readLines} count them: \n, \r\n and a lone \r. */
export function lineBreaks(bytes: Uint8Array): number {
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
  for (let i = bytes.indexOf(13); i >= 0; i = bytes.indexOf(13, i + 1)) if (bytes[i + 1] !== 10) n++;
  return n;
}

/**
 * Streams a JSONL file through core's {@link parseJsonlLines}, so every record, good or bad, is reported
 * exactly as `gymflow` reports it everywhere else (`file:line $.path: message`). Blank lines are
 * skipped; a line that is not JSON or that `parse` rejects becomes an error record and the rest of the
 * file goes on.
 *
 * `parseJsonlLines` is synchronous, so lines are fed to it one at a time as {@link readLines} produces them: it
 * is only asked for its next record once a non-blank line is waiting (it skips blank lines without
 * yielding, so blank lines are queued together with the next non-blank one).
 *
 * @param file The name used in messages (usually the path as the user gave it).
 */
export async function* streamJsonl<T>(
  path: string,
  file: string,
  parse: (value: unknown, place: string) => T,
): AsyncGenerator<JsonlRecord<T>> {
  const waiting: string[] = [];
  let ended = false;
  const source: Iterable<string> = {
    [Symbol.iterator]: (): Iterator<string> => ({
      next: (): IteratorResult<string> => {
        const text = waiting.shift();
        if (text !== undefined) return { value: text, done: false };
        if (!ended) throw new Error('streamJsonl: the parser asked for a line that has not been read yet');
        return { value: undefined, done: true };
      },
    }),
  };
  const records = parseJsonlLines(source, file, parse);
  for await (const line of readLines(path)) {
    waiting.push(line);
    if (line.trim() === '') continue;
    const next = records.next();
    if (!next.done) yield next.value;
  }
  ended = true;
  // Drains trailing blank lines; they produce no records.
  for (let next = records.next(); !next.done; next = records.next()) yield next.value;
}

/** The identity parse for {@link streamJsonl}: any JSON value is accepted. */
export function anyJson(value: unknown): unknown {
  return value;
}

/** Where a file stops being UTF-8: the byte offset (0-based) and line (1-based) of the first bad sequence. */
export interface Utf8Error {
  offset: number;
  line: number;
}

/**
 * The first byte sequence of a file that is not UTF-8, or `undefined` when the whole file is. Text decoding
 * (`readLines`, `readFile(…, 'utf8')`) turns such bytes into U+FFFD silently; this lets a reader say so. One
 * streaming pass of `isUtf8` over the file's chunks (a character split between two chunks is carried over);
 * the line is counted only when something is found.
 */
export async function findInvalidUtf8(path: string): Promise<Utf8Error | undefined> {
  let carry: Buffer = Buffer.alloc(0);
  let base = 0; // the file offset of the chunk's first byte
  let bad: number | undefined;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    const bytes = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const end = completeLength(bytes);
    const body = bytes.subarray(0, end);
    if (!isUtf8(body)) {
      bad = base + utf8ErrorOffset(body);
      break;
    }
    base += end;
    carry = Buffer.from(bytes.subarray(end));
  }
  if (bad === undefined && carry.length > 0) bad = base + utf8ErrorOffset(carry);
  if (bad === undefined) return undefined;
  return { offset: bad, line: await lineAt(path, bad) };
}

/** The length of `bytes` without a trailing character that may continue in the next chunk. */
function completeLength(bytes: Buffer): number {
  let start = bytes.length - 1;
  while (start >= 0 && bytes.length - start <= 3 && ((bytes[start] as number) & 0xc0) === 0x80) start--;
  if (start < 0) return bytes.length;
  const lead = bytes[start] as number;
  const width = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return width > bytes.length - start ? start : bytes.length;
}

/**
 * The offset of the first invalid sequence in `bytes` (its length when there is none, which
 * {@link findInvalidUtf8} never asks about): a stray continuation byte, a bad lead byte, a truncated
 * sequence, an overlong form, a surrogate, or a code point past U+10FFFF.
 */
function utf8ErrorOffset(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] as number;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const width = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (width === 0 || i + width > bytes.length) return i;
    const second = bytes[i + 1] as number;
    // The second byte's range excludes overlong forms, surrogates (ED A0..BF) and code points past U+10FFFF.
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    if (second < low || second > high) return i;
    for (let k = 2; k < width; k++) if (((bytes[i + k] as number) & 0xc0) !== 0x80) return i;
    i += width;
  }
  return i;
}

/** The 1-based line of byte `offset` of a file. */
async function lineAt(path: string, offset: number): Promise<number> {
  let line = 1;
  let seen = 0;
  for await (const chunk of createReadStream(path, { end: Math.max(0, offset - 1) }) as AsyncIterable<Buffer>) {
    for (let at = chunk.indexOf(10); at !== -1 && seen + at < offset; at = chunk.indexOf(10, at + 1)) line++;
    seen += chunk.length;
  }
  return line;
}
