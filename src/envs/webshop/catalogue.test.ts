import { describe, expect, it } from 'vitest';
import { formatPrice, generateProducts, getCatalogue, listPhrases, PRODUCTS_PER_TYPE, searchText, titleCase } from './catalogue.js';
import { tokenize } from './tokenize.js';
import { CATEGORIES } from './vocabulary.js';

describe('webshop catalogue', () => {
  const { products, byAsin } = getCatalogue();

  it('has 1,500 products over ten departments of five types, with unique ASIN-shaped ids', () => {
    expect(products).toHaveLength(1500);
    expect(CATEGORIES).toHaveLength(10);
    expect(new Set(products.map((p) => p.category)).size).toBe(10);
    for (const c of CATEGORIES) for (const t of c.types) expect(products.filter((p) => p.type === t.name && p.category === c.id)).toHaveLength(PRODUCTS_PER_TYPE);
    expect(byAsin.size).toBe(1500);
    for (const [i, p] of products.entries()) {
      expect(p.asin).toMatch(/^B0[A-Z0-9]{8}$/);
      expect(p.index).toBe(i);
      expect(byAsin.get(p.asin)).toBe(p);
    }
  });

  it('gives every product a title, a description, 3–5 of its type\'s attributes, options from its type and a price in its range', () => {
    const types = new Map(CATEGORIES.flatMap((c) => c.types.map((t) => [t.name, { c, t }] as const)));
    for (const p of products) {
      const { c, t } = types.get(p.type) as NonNullable<ReturnType<typeof types.get>>;
      expect(p.category).toBe(c.id);
      expect(p.categoryName).toBe(c.name);
      expect(p.title.startsWith(`${p.brand} `)).toBe(true);
      expect(p.attributes.length).toBeGreaterThanOrEqual(3);
      expect(p.attributes.length).toBeLessThanOrEqual(5);
      expect(new Set(p.attributes).size).toBe(p.attributes.length);
      for (const a of p.attributes) {
        expect(t.attributes).toContain(a);
        expect(p.description, `${p.asin} describes ${a}`).toContain(a);
      }
      expect(p.options.map((o) => o.name)).toEqual(Object.keys(t.options));
      for (const o of p.options) {
        expect(o.values.length).toBeGreaterThanOrEqual(Math.ceil((t.options[o.name] as readonly string[]).length / 2));
        expect(o.values.every((v) => (t.options[o.name] as readonly string[]).includes(v))).toBe(true);
      }
      expect(p.priceCents).toBeGreaterThanOrEqual(t.price[0] * 100);
      expect(p.priceCents).toBeLessThan(t.price[1] * 100);
    }
  });

  it('keeps commas out of every phrase pages and instructions list', () => {
    for (const c of CATEGORIES) {
      for (const t of c.types) {
        for (const phrase of [t.name, ...t.attributes, ...Object.keys(t.options), ...Object.values(t.options).flat()]) expect(phrase, `${t.name}: ${phrase}`).not.toMatch(/,/);
        for (const name of Object.keys(t.options)) expect(name).toMatch(/^[a-z]+$/);
      }
    }
  });

  it('names a product\'s own type in its title and no other type of its department (the reward reads the type from titles)', () => {
    for (const p of products) {
      const words = new Set(tokenize(p.title));
      const names = (type: string): boolean => tokenize(type).every((w) => words.has(w));
      for (const t of CATEGORIES.find((c) => c.id === p.category)?.types ?? []) expect(names(t.name), `${p.title} / ${t.name}`).toBe(t.name === p.type);
    }
  });

  it('is the same store on every build, built once per process', () => {
    const again = generateProducts();
    expect(again).toEqual(products);
    expect(getCatalogue()).toBe(getCatalogue());
    expect(generateProducts(7)[0]?.asin).not.toBe(products[0]?.asin);
    expect(getCatalogue().index.size).toBe(1500);
  });

  it('indexes titles and descriptions', () => {
    const p = products[123];
    expect(searchText(p as (typeof products)[number])).toBe(`${p?.title} ${p?.description}`);
  });

  it('formats titles, lists and prices', () => {
    expect(titleCase('usb c fast charging')).toBe('USB C Fast Charging');
    expect(listPhrases(['a'])).toBe('a');
    expect(listPhrases(['a', 'b'])).toBe('a and b');
    expect(listPhrases(['a', 'b', 'c'])).toBe('a, b and c');
    expect(formatPrice(3299)).toBe('$32.99');
    expect(formatPrice(500)).toBe('$5.00');
  });
});
