import { describe, expect, it } from 'vitest';
import { Bm25Index } from './bm25.js';
import { getCatalogue } from './catalogue.js';

describe('Bm25Index', () => {
  // Lengths 2, 3, 2 terms: avgdl = 7/3; "red" is in 2 of 3 documents.
  const index = new Bm25Index(['red shirt', 'red red shoe', 'blue hat']);
  const avgdl = 7 / 3;
  const idfRed = Math.log(1 + (3 - 2 + 0.5) / (2 + 0.5));
  const term = (idf: number, tf: number, len: number): number => (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * len) / avgdl));

  it('scores with Okapi BM25, k1 = 1.2 and b = 0.75, and Lucene\'s idf', () => {
    expect(index.avgLength).toBeCloseTo(avgdl, 12);
    expect(index.idf('red')).toBeCloseTo(Math.log(1.6), 12);
    expect(index.idf('missing')).toBe(0);
    expect(index.documentFrequency('red')).toBe(2);
    expect(index.score('red', 0)).toBeCloseTo(term(idfRed, 1, 2), 12);
    expect(index.score('red', 1)).toBeCloseTo(term(idfRed, 2, 3), 12);
    const idfHat = Math.log(1 + (3 - 1 + 0.5) / (1 + 0.5));
    expect(index.score('blue hat', 2)).toBeCloseTo(2 * term(idfHat, 1, 2), 12);
  });

  it('ranks by score, best first, counts a repeated query term once, and leaves out documents without a query term', () => {
    const hits = index.search('red', 10);
    expect(hits.map((h) => h.doc)).toEqual([1, 0]);
    expect(hits[0]?.score).toBeCloseTo(term(idfRed, 2, 3), 12);
    expect(index.search('red red red', 10)).toEqual(hits);
    expect(index.search('red hat', 10).map((h) => h.doc)).toEqual([2, 1, 0]);
    expect(index.search('nothing here', 10)).toEqual([]);
    expect(index.search('', 10)).toEqual([]);
    expect(index.search('red', 1).map((h) => h.doc)).toEqual([1]);
    expect(index.search('red', 0)).toEqual([]);
  });

  it('breaks ties by document index', () => {
    const ties = new Bm25Index(['cat', 'dog', 'cat', 'cat']);
    expect(ties.search('cat', 2).map((h) => h.doc)).toEqual([0, 2]);
  });

  it('b = 0 ignores length and k1 = 0 ignores term frequency', () => {
    const flat = new Bm25Index(['red shirt', 'red red shoe', 'blue hat'], { k1: 0 });
    expect(flat.score('red', 1)).toBeCloseTo(flat.score('red', 0), 12);
    const noLength = new Bm25Index(['red', 'red shirt long sleeve'], { b: 0 });
    expect(noLength.score('red', 0)).toBeCloseTo(noLength.score('red', 1), 12);
  });

  it('ranks the catalogue exactly as scoring every product one by one would', () => {
    const { index: store, products } = getCatalogue();
    for (const query of ['hair extension natural looking heat resistant', 'stainless steel water bottle leak proof', 'dog bed orthopedic', 'usb c fast charging', 'zzz']) {
      const expected = products
        .map((p) => ({ doc: p.index, score: store.score(query, p.index) }))
        .filter((h) => h.score > 0)
        .sort((a, b) => b.score - a.score || a.doc - b.doc)
        .slice(0, 50);
      const got = store.search(query, 50);
      expect(got.map((h) => h.doc), query).toEqual(expected.map((h) => h.doc));
      for (const [i, h] of got.entries()) expect(h.score).toBeCloseTo(expected[i]?.score as number, 9);
    }
  });
});
