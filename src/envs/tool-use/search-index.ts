/**
 * A small BM25 index (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond",
 * 2009) over short documents, with title terms counted twice. Deterministic: ties are broken by
 * document id.
 */

/** A document in the index. */
export interface SearchDocument {
  id: string;
  title: string;
  body: string;
}

/** One ranked hit. */
export interface SearchHit<D extends SearchDocument = SearchDocument> {
  doc: D;
  score: number;
  /** The body sentence that best matches the query (truncated). */
  snippet: string;
}

/** BM25 parameters: `k1` saturates term frequency, `b` normalises for document length. */
export interface Bm25Options {
  k1?: number;
  b?: number;
  /** How many times title terms count (default 2). */
  titleWeight?: number;
}

const STOPWORDS = new Set(
  'a an and are as at be by for from has have in is it its of on or that the their this to was were which who whose with what when where how many much does did do'.split(
    ' ',
  ),
);

/** Lower-cased word tokens without stopwords, with plural `s` and possessive `'s` stripped. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.normalize('NFKC').toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (!raw || STOPWORDS.has(raw)) continue;
    out.push(stem(raw));
  }
  return out;
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1);
  return word;
}

const SNIPPET_LENGTH = 160;

/**
 * A BM25 index over a fixed document set.
 *
 * @example
 * ```ts
 * const index = new SearchIndex([{ id: 'd1', title: 'Velmora', body: 'A river port famous for glass.' }]);
 * index.search('glass port', 3)[0]?.doc.id; // 'd1'
 * ```
 */
export class SearchIndex<D extends SearchDocument = SearchDocument> {
  private readonly k1: number;
  private readonly b: number;
  private readonly postings = new Map<string, Map<number, number>>();
  private readonly lengths: number[] = [];
  private readonly avgLength: number;

  /** Indexes `documents` once; the set is fixed afterwards. */
  constructor(
    readonly documents: readonly D[],
    options: Bm25Options = {},
  ) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    const titleWeight = options.titleWeight ?? 2;
    documents.forEach((doc, i) => {
      const terms = [...Array.from({ length: titleWeight }, () => tokenize(doc.title)).flat(), ...tokenize(doc.body)];
      this.lengths.push(terms.length);
      for (const term of terms) {
        let posting = this.postings.get(term);
        if (!posting) this.postings.set(term, (posting = new Map()));
        posting.set(i, (posting.get(i) ?? 0) + 1);
      }
    });
    this.avgLength = this.lengths.reduce((a, n) => a + n, 0) / Math.max(1, this.lengths.length);
  }

  /** Inverse document frequency with BM25's +1 smoothing (never negative). */
  private idf(term: string): number {
    const n = this.postings.get(term)?.size ?? 0;
    const total = this.documents.length;
    return Math.log(1 + (total - n + 0.5) / (n + 0.5));
  }

  /** The top `k` documents with a positive score, best first. */
  search(query: string, k = 5): SearchHit<D>[] {
    const terms = [...new Set(tokenize(query))];
    const scores = new Map<number, number>();
    for (const term of terms) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      const idf = this.idf(term);
      for (const [i, tf] of posting) {
        const len = this.lengths[i] ?? 0;
        const norm = tf + this.k1 * (1 - this.b + (this.b * len) / this.avgLength);
        scores.set(i, (scores.get(i) ?? 0) + (idf * tf * (this.k1 + 1)) / norm);
      }
    }
    return [...scores.entries()]
      .map(([i, score]) => ({ doc: this.documents[i] as D, score }))
      .sort((x, y) => y.score - x.score || x.doc.id.localeCompare(y.doc.id))
      .slice(0, Math.max(0, k))
      .map((hit) => ({ ...hit, snippet: snippet(hit.doc.body, terms) }));
  }
}

/** The body sentence with the most query terms (the first on ties), cut to {@link SNIPPET_LENGTH}. */
function snippet(body: string, queryTerms: readonly string[]): string {
  const wanted = new Set(queryTerms);
  // Split after sentence punctuation followed by space, so `42.50` stays whole.
  const sentences = body.split(/(?<=[.!?])\s+/);
  let best = sentences[0] ?? '';
  let bestHits = -1;
  for (const sentence of sentences) {
    const hits = tokenize(sentence).filter((t) => wanted.has(t)).length;
    if (hits > bestHits) {
      best = sentence;
      bestHits = hits;
    }
  }
  const text = best.trim();
  return text.length > SNIPPET_LENGTH ? `${text.slice(0, SNIPPET_LENGTH - 1)}…` : text;
}
