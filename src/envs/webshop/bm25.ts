import { tokenize } from './tokenize.js';

/**
 * Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009) over a
 * fixed set of documents, for `gymflow/webshop-v0`'s search engine (WebShop ranks with Pyserini's BM25).
 *
 * score(d, q) = Σ over the distinct terms t of q of idf(t) · tf(t, d) · (k1 + 1) / (tf(t, d) + k1 · (1 − b + b · |d| / avgdl))
 *
 * with idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5)) (Lucene's form, never negative), N the number of
 * documents, n(t) how many contain t, |d| a document's length in terms and avgdl the mean length. The
 * defaults are Lucene's and Pyserini's: k1 = 1.2, b = 0.75. A term repeated in the query counts once.
 * Ties are broken by document index, so a ranking is deterministic.
 *
 * The index is built once: each term's postings (document indices and term frequencies) sit in typed
 * arrays, the length normaliser `k1 · (1 − b + b · |d| / avgdl)` is precomputed per document, and a search
 * touches only the postings of the query's terms.
 */

/** BM25's free parameters. */
export interface Bm25Options {
  /** Term-frequency saturation (default 1.2). */
  k1?: number;
  /** Length normalisation, 0 (none) to 1 (full) (default 0.75). */
  b?: number;
}

/** One ranked document: its index in the indexed list and its score. */
export interface Bm25Hit {
  doc: number;
  score: number;
}

interface Postings {
  docs: Int32Array;
  tfs: Float64Array;
  idf: number;
}

/**
 * A BM25 index over texts.
 *
 * @example
 * ```ts
 * const index = new Bm25Index(['red cotton shirt', 'blue wool sweater']);
 * index.search('cotton shirt', 10); // [{ doc: 0, score: … }]
 * ```
 */
export class Bm25Index {
  /** BM25's k1 and b, as used. */
  readonly k1: number;
  readonly b: number;
  /** The number of documents. */
  readonly size: number;
  /** The mean document length in terms. */
  readonly avgLength: number;
  private readonly postings = new Map<string, Postings>();
  private readonly norms: Float64Array;
  private readonly scores: Float64Array;
  private readonly seen: Uint8Array;
  private readonly touched: Int32Array;

  /** Indexes `texts` (document `i` is `texts[i]`); the set is fixed afterwards. */
  constructor(texts: readonly string[], options: Bm25Options = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    const n = texts.length;
    this.size = n;
    // Pass 1: every document as term ids, and each term's document frequency.
    const ids = new Map<string, number>();
    const df: number[] = [];
    const docs: Int32Array[] = [];
    let total = 0;
    for (let i = 0; i < n; i++) {
      const terms = tokenize(texts[i] as string);
      const row = new Int32Array(terms.length);
      for (let j = 0; j < terms.length; j++) {
        const t = terms[j] as string;
        let id = ids.get(t);
        if (id === undefined) {
          id = df.length;
          ids.set(t, id);
          df.push(0);
        }
        row[j] = id;
      }
      row.sort();
      for (let j = 0; j < row.length; j++) if (j === 0 || row[j] !== row[j - 1]) df[row[j] as number] = (df[row[j] as number] as number) + 1;
      docs.push(row);
      total += row.length;
    }
    this.avgLength = n === 0 ? 0 : total / n;
    // Pass 2: postings sized by document frequency, filled in document order (so each is sorted).
    const lists = df.map((f) => ({ docs: new Int32Array(f), tfs: new Float64Array(f), idf: Math.log(1 + (n - f + 0.5) / (f + 0.5)) }));
    const fill = new Int32Array(df.length);
    for (let i = 0; i < n; i++) {
      const row = docs[i] as Int32Array;
      for (let j = 0; j < row.length; ) {
        const id = row[j] as number;
        let k = j + 1;
        while (k < row.length && row[k] === id) k++;
        const list = lists[id] as Postings;
        const at = fill[id] as number;
        list.docs[at] = i;
        list.tfs[at] = k - j;
        fill[id] = at + 1;
        j = k;
      }
    }
    for (const [t, id] of ids) this.postings.set(t, lists[id] as Postings);
    this.norms = new Float64Array(n);
    for (let i = 0; i < n; i++) this.norms[i] = this.k1 * (1 - this.b + (this.b * (docs[i] as Int32Array).length) / (this.avgLength || 1));
    this.scores = new Float64Array(n);
    this.seen = new Uint8Array(n);
    this.touched = new Int32Array(n);
  }

  /** How many documents contain `term` (a term as {@link tokenize} makes it). */
  documentFrequency(term: string): number {
    return this.postings.get(term)?.docs.length ?? 0;
  }

  /** The inverse document frequency of `term` (0 for a term in no document: it cannot score). */
  idf(term: string): number {
    return this.postings.get(term)?.idf ?? 0;
  }

  /** The BM25 score of document `doc` for `query` (0 when they share no term). */
  score(query: string, doc: number): number {
    let s = 0;
    for (const t of new Set(tokenize(query))) {
      const p = this.postings.get(t);
      if (!p) continue;
      const at = p.docs.indexOf(doc);
      if (at < 0) continue;
      const tf = p.tfs[at] as number;
      s += (p.idf * tf * (this.k1 + 1)) / (tf + (this.norms[doc] as number));
    }
    return s;
  }

  /** The `limit` best documents with a positive score, best first (ties: lower index first). */
  search(query: string, limit: number): Bm25Hit[] {
    const { scores, seen, touched, norms } = this;
    const k1p1 = this.k1 + 1;
    let count = 0;
    for (const t of new Set(tokenize(query))) {
      const p = this.postings.get(t);
      if (!p) continue;
      const { docs, tfs, idf } = p;
      for (let j = 0; j < docs.length; j++) {
        const d = docs[j] as number;
        const tf = tfs[j] as number;
        if (seen[d] === 0) {
          seen[d] = 1;
          scores[d] = 0;
          touched[count++] = d;
        }
        scores[d] = (scores[d] as number) + (idf * tf * k1p1) / (tf + (norms[d] as number));
      }
    }
    // Keep the best `limit` in a sorted array; most documents fall below its last entry and cost one comparison.
    const top: number[] = [];
    const better = (a: number, b: number): boolean => (scores[a] as number) > (scores[b] as number) || ((scores[a] as number) === (scores[b] as number) && a < b);
    for (let j = 0; j < count; j++) {
      const d = touched[j] as number;
      seen[d] = 0;
      if (top.length === limit && !better(d, top[limit - 1] as number)) continue;
      let at = top.length === limit ? limit - 1 : top.length;
      while (at > 0 && better(d, top[at - 1] as number)) {
        top[at] = top[at - 1] as number;
        at--;
      }
      top[at] = d;
    }
    return top.map((doc) => ({ doc, score: scores[doc] as number }));
  }
}
