import { describe, expect, it } from 'vitest';
import { WORLD_DOCUMENTS } from './documents.js';
import { SearchIndex, tokenize } from './search-index.js';
import { ENTITIES } from './world.js';

describe('tokenize', () => {
  it('lower-cases, drops stopwords and strips plurals', () => {
    expect(tokenize('The Cities of the Delta, and its Glassworks!')).toEqual(['city', 'delta', 'glasswork']);
  });
});

describe('SearchIndex', () => {
  const index = new SearchIndex(WORLD_DOCUMENTS);

  it('ranks the document that matches rare terms first', () => {
    const hits = index.search('copper-domed observatory', 3);
    expect(hits[0]?.doc.title).toBe('Drummerlin');
    expect(hits[0]?.snippet).toContain('observatory');
    expect(index.search('Brightwell', 3)[0]?.doc.title).toBe('Brightwell Dynamics');
  });

  it('scores are sorted, positive and deterministic', () => {
    const a = index.search('glass blue delta', 10);
    expect(a.length).toBeGreaterThan(3);
    for (let i = 1; i < a.length; i++) expect((a[i - 1]?.score ?? 0) >= (a[i]?.score ?? 0)).toBe(true);
    expect(a.every((h) => h.score > 0)).toBe(true);
    expect(index.search('glass blue delta', 10)).toEqual(a);
  });

  it('puts every entity first for its own description (the clue search tasks use)', () => {
    for (const entity of ENTITIES) {
      const top = index.search(entity.clue, 3).find((h) => h.doc.tag === entity.kind);
      expect(top?.doc.title, entity.clue).toBe(entity.name);
    }
  });

  it('returns nothing for unknown words and respects k', () => {
    expect(index.search('zyxwv qqq', 5)).toEqual([]);
    expect(index.search('city', 2)).toHaveLength(2);
  });

  it('has a collection of 40–80 documents with unique ids', () => {
    expect(WORLD_DOCUMENTS.length).toBeGreaterThanOrEqual(40);
    expect(WORLD_DOCUMENTS.length).toBeLessThanOrEqual(80);
    expect(new Set(WORLD_DOCUMENTS.map((d) => d.id)).size).toBe(WORLD_DOCUMENTS.length);
  });
});
