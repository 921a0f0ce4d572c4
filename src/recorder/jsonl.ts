import type { ConversionProblem } from './adapter.js';
import { problem } from './adapter.js';

/**
 * A {@link ConversionProblem} from one of `parseJsonlLines`' error strings (`file:line $.path: message`),
 * so JSONL adapters report bad lines with the same file, line and JSON path.
 */
export function jsonlProblem(file: string, line: number, formatted: string): ConversionProblem {
  const prefix = `${file}:${line} `;
  const rest = formatted.startsWith(prefix) ? formatted.slice(prefix.length) : formatted;
  const m = /^(\$\S*): ([\s\S]*)$/.exec(rest);
  return problem(file, m?.[1] ?? '$', m?.[2] ?? rest, { line });
}
