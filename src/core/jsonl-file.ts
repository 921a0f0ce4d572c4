import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseJsonlLines, type JsonlRecord } from './trajectory.js';

/**
 * Line-by-line reading of JSONL files. Nothing here holds more than one line in memory, so a 1 GB log
 * streams through in constant space.
 */

/** `text` without a leading UTF-8 byte-order mark (editors on Windows write one). */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Yields the lines of a text file, without their terminators (`\n` or `\r\n`). A UTF-8 byte-order mark
 * on the first line is dropped. Breaking out of the loop closes the file.
 */
export async function* readLines(path: string): AsyncGenerator<string> {
  const input = createReadStream(path, { encoding: 'utf8' });
  const rl = createInterface({ input, crlfDelay: Infinity });
  let first = true;
  try {
    for await (const line of rl) {
      yield first ? stripBom(line) : line;
      first = false;
    }
  } finally {
    rl.close();
    input.destroy();
  }
}

/**
 * Streams a JSONL file through core's {@link parseJsonlLines}, so every record, good or bad, is reported
 * exactly as `gymflow` reports it everywhere else (`file:line $.path: message`). Blank lines are
 * skipped; a line that is not JSON or that `parse` rejects becomes an error record and the rest of the
 * file goes on.
 *
 * `parseJsonlLines` is synchronous, so lines are fed to it one at a time as `readline` produces them: it
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
