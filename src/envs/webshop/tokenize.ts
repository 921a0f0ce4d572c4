/**
 * The tokeniser of `gymflow/webshop-v0`'s search engine and reward: lower-cased runs of letters and digits,
 * English stop words dropped, a light plural stemmer (`extensions` → `extension`, `batteries` → `battery`).
 * The same function reads documents and queries, so they meet on the same terms.
 */

/** Words too common to say anything about a product (and the instruction's own scaffolding). */
const STOPWORDS = new Set(
  (
    'a an and are as at be by for from has have in into is it its of on or that the their this to was were with ' +
    'i me my we you your am need want would like find please some which who what price lower than dollars dollar'
  ).split(' '),
);

const SEPARATORS = /[^a-z0-9]+/;

/** One word's stem: plural `-ies` → `-y`, plural `-s` dropped (not `-ss`, `-us`, `-is`), words of 3 letters or fewer kept. */
export function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is')) return word.slice(0, -1);
  return word;
}

/**
 * The terms of a text, in order, repeats kept (BM25 counts them).
 *
 * @example
 * ```ts
 * tokenize('Natural Looking Clip-In Hair Extensions'); // ['natural', 'looking', 'clip', 'hair', 'extension']
 * ```
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const word of text.toLowerCase().split(SEPARATORS)) {
    if (word !== '' && !STOPWORDS.has(word)) out.push(stem(word));
  }
  return out;
}
