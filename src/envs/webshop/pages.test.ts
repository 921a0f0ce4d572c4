import { describe, expect, it } from 'vitest';
import { getCatalogue, type Product } from './catalogue.js';
import { pageCount, parseItemPage, parseResultsPage, renderItemPage, renderResultsPage } from './pages.js';

describe('webshop pages', () => {
  const products = getCatalogue().products;
  const ten = products.slice(40, 50);

  it('lists a results page\'s products with ids, titles and prices, and says which pages follow', () => {
    const text = renderResultsPage('red shirt', 1, 50, ten);
    const lines = text.split('\n');
    expect(lines[0]).toBe('Search results for "red shirt": page 2 of 5 (50 products).');
    expect(lines[1]).toBe(`${ten[0]?.asin} | ${ten[0]?.title} | $${((ten[0]?.priceCents ?? 0) / 100).toFixed(2)}`);
    expect(lines).toHaveLength(12);
    expect(lines[11]).toBe('More: prev_page, next_page.');
    expect(renderResultsPage('x', 0, 7, ten.slice(0, 7)).endsWith('No more pages.')).toBe(true);
    expect(renderResultsPage('x', 4, 50, ten).endsWith('More: prev_page.')).toBe(true);
    expect(renderResultsPage('qqq', 0, 0, [])).toBe('Search results for "qqq": no products match. Try other words with search(query).');
    expect([0, 1, 10, 11, 50].map(pageCount)).toEqual([1, 1, 1, 2, 5]);
  });

  it('reads a results page back', () => {
    expect(parseResultsPage(renderResultsPage('red "shirt"', 1, 50, ten))).toEqual({
      query: 'red "shirt"',
      page: 2,
      pages: 5,
      total: 50,
      items: ten.map((p) => ({ asin: p.asin, title: p.title, priceCents: p.priceCents })),
    });
    expect(parseResultsPage(renderResultsPage('qqq', 0, 0, []))).toEqual({ query: 'qqq', page: 1, pages: 1, total: 0, items: [] });
    expect(parseResultsPage('You are on the search page of the store.')).toBeUndefined();
  });

  it('shows an item\'s title, price, department, options with the selected ones marked, description and attributes, and reads it back', () => {
    const p = products.find((x) => x.options.length === 2) as Product;
    const [first, second] = p.options;
    const value = first?.values[1] as string;
    const text = renderItemPage(p, { [first?.name as string]: value });
    expect(text.split('\n')).toEqual([
      `Item ${p.asin}: ${p.title}`,
      `Price: $${(p.priceCents / 100).toFixed(2)}`,
      `Department: ${p.categoryName}`,
      'Options:',
      `- ${first?.name} (selected: ${value}): ${first?.values.join(', ')}`,
      `- ${second?.name}: ${second?.values.join(', ')}`,
      `Description: ${p.description}`,
      `Attributes: ${p.attributes.join(', ')}`,
    ]);
    expect(parseItemPage(`You selected ${first?.name}: ${value}.\n${text}`)).toEqual({
      asin: p.asin,
      title: p.title,
      priceCents: p.priceCents,
      options: [
        { name: first?.name, values: first?.values, selected: value },
        { name: second?.name, values: second?.values },
      ],
      attributes: p.attributes,
    });
    expect(parseItemPage(renderResultsPage('x', 0, 10, ten))).toBeUndefined();
  });

  it('reads every product\'s page back as it is', () => {
    for (const p of products) {
      const page = parseItemPage(renderItemPage(p, {}));
      expect(page?.options.map((o) => ({ name: o.name, values: o.values }))).toEqual(p.options.map((o) => ({ name: o.name, values: [...o.values] })));
      expect(page?.attributes).toEqual(p.attributes);
      expect(page?.priceCents).toBe(p.priceCents);
    }
  });
});
