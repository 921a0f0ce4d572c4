import { formatPrice, type Product } from './catalogue.js';
import { defined } from '../../core/defined.js';

/**
 * The text pages of `gymflow/webshop-v0` (WebShop's text mode, one page per observation) and their readers.
 * A search returns the {@link MAX_RESULTS} best products, {@link RESULTS_PER_PAGE} to a page, as WebShop does.
 *
 * A results page:
 * ```
 * Search results for "hair extension natural looking": page 1 of 5 (50 products).
 * B0MV1JGR9C | Dorark Straight Hair Extension - Thick Double Weft | $38.95
 * …
 * More: next_page.
 * ```
 * An item page:
 * ```
 * Item B0MV1JGR9C: Dorark Straight Hair Extension - Thick Double Weft
 * Price: $38.95
 * Department: Beauty & Personal Care
 * Options:
 * - color (selected: blonde): black, dark brown, blonde
 * - length: 16 inch, 20 inch
 * Description: The Dorark hair extension combines …
 * Attributes: natural looking, tangle free, human hair, straight
 * ```
 * The readers (`parseResultsPage`, `parseItemPage`) take a page back to data: the expert reads the store
 * through them, as any agent reads the text.
 */

/** Products a results page lists. */
export const RESULTS_PER_PAGE = 10;
/** Products a search returns at most (WebShop's 50: five pages). */
export const MAX_RESULTS = 50;

/** The page shown at the start, and after `back` from a results page. */
export const HOME_PAGE = 'You are on the search page of the store. Search for products with search(query).';

/** The number of pages of a result list (at least 1, for an empty list too). */
export function pageCount(results: number): number {
  return Math.max(1, Math.ceil(results / RESULTS_PER_PAGE));
}

/** A results page: `page` is 0-based; `products` are the page's (at most {@link RESULTS_PER_PAGE}). */
export function renderResultsPage(query: string, page: number, total: number, products: readonly Product[]): string {
  const pages = pageCount(total);
  if (total === 0) return `Search results for "${query}": no products match. Try other words with search(query).`;
  const lines = [`Search results for "${query}": page ${page + 1} of ${pages} (${total} products).`];
  for (const p of products) lines.push(`${p.asin} | ${p.title} | ${formatPrice(p.priceCents)}`);
  const more = [page > 0 ? 'prev_page' : '', page + 1 < pages ? 'next_page' : ''].filter((x) => x !== '');
  lines.push(more.length > 0 ? `More: ${more.join(', ')}.` : 'No more pages.');
  return lines.join('\n');
}

/** An item page, with the options selected so far marked. */
export function renderItemPage(product: Product, selected: Readonly<Record<string, string>>): string {
  const lines = [`Item ${product.asin}: ${product.title}`, `Price: ${formatPrice(product.priceCents)}`, `Department: ${product.categoryName}`];
  if (product.options.length > 0) {
    lines.push('Options:');
    for (const o of product.options) {
      const choice = selected[o.name];
      lines.push(`- ${o.name}${choice === undefined ? '' : ` (selected: ${choice})`}: ${o.values.join(', ')}`);
    }
  } else lines.push('Options: none');
  lines.push(`Description: ${product.description}`, `Attributes: ${product.attributes.join(', ')}`);
  return lines.join('\n');
}

/** A product as a results page lists it. */
export interface ListedItem {
  asin: string;
  title: string;
  priceCents: number;
}

/** What a results page says. */
export interface ResultsPage {
  query: string;
  /** 1-based, as the page says. */
  page: number;
  pages: number;
  total: number;
  items: ListedItem[];
}

/** What an item page says. */
export interface ItemPage {
  asin: string;
  title: string;
  priceCents: number;
  /** Option groups in page order, each with its values and the value selected, if any. */
  options: { name: string; values: string[]; selected?: string }[];
  attributes: string[];
}

const RESULTS_HEAD = /^Search results for "(.*)": page (\d+) of (\d+) \((\d+) products?\)\.$/;
const RESULTS_EMPTY = /^Search results for "(.*)": no products match\./;
const LISTED = /^(B0[A-Z0-9]{8}) \| (.*) \| \$(\d+)\.(\d\d)$/;
const ITEM_HEAD = /^Item (B0[A-Z0-9]{8}): (.*)$/;
const PRICE = /^Price: \$(\d+)\.(\d\d)$/;
const OPTION = /^- ([^ (:]+)(?: \(selected: (.*)\))?: (.*)$/;

/** Reads a results page (the first lines of an observation); `undefined` when the text is not one. */
export function parseResultsPage(text: string): ResultsPage | undefined {
  const lines = text.split('\n');
  const head = lines[0] ?? '';
  const empty = RESULTS_EMPTY.exec(head);
  if (empty) return { query: empty[1] as string, page: 1, pages: 1, total: 0, items: [] };
  const m = RESULTS_HEAD.exec(head);
  if (!m) return undefined;
  const items: ListedItem[] = [];
  for (const line of lines.slice(1)) {
    const l = LISTED.exec(line);
    if (l) items.push({ asin: l[1] as string, title: l[2] as string, priceCents: Number(l[3]) * 100 + Number(l[4]) });
  }
  return { query: m[1] as string, page: Number(m[2]), pages: Number(m[3]), total: Number(m[4]), items };
}

/** Reads an item page; `undefined` when the text is not one. */
export function parseItemPage(text: string): ItemPage | undefined {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => ITEM_HEAD.test(l));
  if (at < 0) return undefined;
  const head = ITEM_HEAD.exec(lines[at] as string) as RegExpExecArray;
  const page: ItemPage = { asin: head[1] as string, title: head[2] as string, priceCents: NaN, options: [], attributes: [] };
  for (const line of lines.slice(at + 1)) {
    const price = PRICE.exec(line);
    if (price) page.priceCents = Number(price[1]) * 100 + Number(price[2]);
    const option = OPTION.exec(line);
    if (option) page.options.push({ name: option[1] as string, values: (option[3] as string).split(', '), ...defined({ selected: option[2] }) });
    if (line.startsWith('Attributes: ')) page.attributes = line.slice('Attributes: '.length).split(', ');
  }
  return page;
}
