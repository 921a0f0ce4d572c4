/**
 * The tokens the information-use rule tracks: identifiers, paths and numbers that can carry what an
 * observation revealed into a later action.
 *
 * A token is a maximal run of word characters (`A–Z a–z 0–9 _` and every non-ASCII code unit) that may
 * contain the joiners `.` `/` `-` between word characters: `src/app/main.py`, `max_retries`, `3.14`, `3/4`,
 * `v2-beta`. A joiner at either end is not part of the token (`./a.py.` → `a.py`, `/etc/hosts` →
 * `etc/hosts`), so paths match however they are prefixed. Matching is case-sensitive.
 *
 * A token is *informative* when it has at least 4 characters, or at least 2 and contains a digit, `_` or
 * a joiner (`42`, `v2`, `a_b`, `3/4`). Shorter words (`the`, `ls`, `id`) and single digits occur everywhere
 * and say nothing about where an action's content came from.
 */

import { fmix32 } from './hash.js';

// Class bits: a word character is LETTER, DIGIT or UNDERSCORE; JOIN may sit inside a token.
const LETTER = 1;
const DIGIT = 2;
const UNDERSCORE = 4;
const WORD_MASK = LETTER | DIGIT | UNDERSCORE;
const JOIN = 8;
/** Bits that make a 2- or 3-character token informative. */
const MARKED = DIGIT | UNDERSCORE | JOIN;

/**
 * Character class of every UTF-16 code unit (64 KiB, so the hot loop needs no range check): ASCII as
 * below, every code unit ≥ 128 a letter.
 */
const CLASS = new Uint8Array(65536).fill(LETTER);
for (let c = 0; c < 128; c++) CLASS[c] = 0;
for (let c = 48; c <= 57; c++) CLASS[c] = DIGIT;
for (let c = 65; c <= 90; c++) CLASS[c] = LETTER;
for (let c = 97; c <= 122; c++) CLASS[c] = LETTER;
CLASS[95] = UNDERSCORE; // _
CLASS[46] = JOIN; // .
CLASS[47] = JOIN; // /
CLASS[45] = JOIN; // -

const P1 = 0x01000193;
const P2 = 0x5bd1e995;

/**
 * Receives each informative token: its 64-bit hash (two int32 lanes) and its place `[start, end)` in
 * the scanned text.
 */
export interface TokenSink {
  token(h1: number, h2: number, start: number, end: number): void;
}

/**
 * Calls `sink.token` for every informative token of `text`, in order. One pass, no allocation: the
 * hash is computed while the token is scanned, and character classes come from one table lookup
 * whose bits also record what the token contains. Equal tokens (anywhere, in any text) hash equally.
 */
export function scanTokens(text: string, sink: TokenSink): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    let q = CLASS[c] as number;
    if ((q & WORD_MASK) === 0) {
      i++;
      continue;
    }
    const start = i;
    let h1 = 0x811c9dc5;
    let h2 = 0x27d4eb2f;
    let bits = 0;
    for (;;) {
      h1 = Math.imul(h1 ^ c, P1);
      h2 = Math.imul(h2 ^ c, P2);
      bits |= q;
      if (++i >= n) break;
      c = text.charCodeAt(i);
      q = CLASS[c] as number;
      if ((q & WORD_MASK) !== 0) continue;
      // A joiner stays in the token only when a word character follows it.
      if (q === JOIN && i + 1 < n && ((CLASS[text.charCodeAt(i + 1)] as number) & WORD_MASK) !== 0) continue;
      break;
    }
    const len = i - start;
    if (len >= 4 || (len >= 2 && (bits & MARKED) !== 0)) {
      sink.token(fmix32(h1 ^ len), fmix32(h2 ^ Math.imul(len, 0x9e3779b1)), start, i);
    }
  }
}

/**
 * The informative tokens of `text` as strings, in order (duplicates kept). The reference form of
 * {@link scanTokens}, for tests and explanations; the rules use the hashing scanner.
 *
 * @example
 * ```ts
 * informativeTokens('Error in ./src/app.py line 42: max_retries=3'); // ['Error', 'src/app.py', 'line', '42', 'max_retries']
 * ```
 */
export function informativeTokens(text: string): string[] {
  const out: string[] = [];
  scanTokens(text, { token: (_h1, _h2, start, end) => out.push(text.slice(start, end)) });
  return out;
}

/** Calls {@link scanTokens} on every string and number inside a params value (keys are not scanned). */
export function scanParamTokens(value: unknown, sink: TokenSink): void {
  if (typeof value === 'string') {
    scanTokens(value, sink);
  } else if (typeof value === 'number') {
    scanTokens(String(value), sink);
  } else if (Array.isArray(value)) {
    for (const v of value) scanParamTokens(v, sink);
  } else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const key in o) {
      if (Object.prototype.hasOwnProperty.call(o, key)) scanParamTokens(o[key], sink);
    }
  }
}
