import { Rng } from '../../core/rng.js';
import { Bm25Index } from './bm25.js';
import { BRAND_HEADS, BRAND_TAILS, CATEGORIES, type CategorySpec, type ProductTypeSpec } from './vocabulary.js';

/**
 * The product catalogue of `gymflow/webshop-v0`: {@link PRODUCTS_PER_TYPE} products of each of the 50 product
 * types in `vocabulary.ts` (1,500 over ten departments), generated from {@link CATALOGUE_SEED}. Each product
 * has an id in Amazon's ASIN shape (`B07ZK3LPWN`), a brand, a title, a description, 3–5 attributes of its type,
 * a subset of each of its type's option groups, and a price. The catalogue and its search index are built
 * once per process, on first use ({@link getCatalogue}), in a few milliseconds.
 */

/** The seed the catalogue is generated from: every process, every machine gets the same store. */
export const CATALOGUE_SEED = 20220701;

/** Products generated per product type. */
export const PRODUCTS_PER_TYPE = 30;

/** An option group a product offers: its name (`color`) and the values one may select, in the type's order. */
export interface ProductOption {
  name: string;
  values: readonly string[];
}

/** One product of the store. */
export interface Product {
  /** Its id, unique in the catalogue (`B07ZK3LPWN`). */
  asin: string;
  /** Its position in {@link Catalogue.products} (and document number in the search index). */
  index: number;
  /** The department's id (`beauty`). */
  category: string;
  /** The department's name (`Beauty & Personal Care`). */
  categoryName: string;
  /** The product type's name (`hair extension`). */
  type: string;
  /** Its position among the products of its type, 0 to {@link PRODUCTS_PER_TYPE} − 1 (the splits use it). */
  rank: number;
  brand: string;
  title: string;
  description: string;
  /** What the product is (`natural looking`, `heat resistant`), in its type's order. */
  attributes: readonly string[];
  /** Its option groups, in its type's order. */
  options: readonly ProductOption[];
  /** Its price in cents. */
  priceCents: number;
}

/** The generated store: its products, an id lookup and the BM25 index over titles and descriptions. */
export interface Catalogue {
  products: readonly Product[];
  byAsin: ReadonlyMap<string, Product>;
  /** Document `i` is `products[i]`'s title and description. */
  index: Bm25Index;
}

const ASIN_CHARS = [...'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789'];
const CENTS = [99, 49, 95, 0] as const;
/** A type named in the plural (`yoga pants`, `jeans`), not `glass`. */
export const PLURAL = /[^s]s$/;
/** Words a title writes in capitals. */
const ACRONYMS = new Set(['usb', 'led', 'uv', 'bpa', 'pfoa', 'gmo', 'tpe', 'gan', 'rc', 'c']);

/** `usb c` → `USB C`, `natural looking` → `Natural Looking`. */
export function titleCase(phrase: string): string {
  return phrase
    .split(' ')
    .map((w) => (ACRONYMS.has(w) ? w.toUpperCase() : w.charAt(0).toUpperCase() + w.slice(1)))
    .join(' ');
}

/** `a`, `a and b`, `a, b and c`. */
export function listPhrases(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1] as string}`;
}

/** `3299` → `$32.99`. */
export function formatPrice(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

/** A subset of `items` of size in [min, max], in the original order. */
function subset<T>(rng: Rng, items: readonly T[], min: number, max: number): T[] {
  const n = rng.int(Math.min(min, items.length), Math.min(max, items.length));
  const chosen = new Set(rng.shuffle(items.map((_, i) => i)).slice(0, n));
  return items.filter((_, i) => chosen.has(i));
}

function describe(rng: Rng, category: CategorySpec, type: ProductTypeSpec, brand: string, attributes: readonly string[]): string {
  const shuffled = rng.shuffle(attributes);
  const plural = PLURAL.test(type.name);
  const lead = rng.pick([
    `The ${brand} ${type.name} ${plural ? 'combine' : 'combines'} ${listPhrases(shuffled)}.`,
    `${plural ? 'These' : 'This'} ${type.name} from ${brand} ${plural ? 'are' : 'is'} made to last: ${listPhrases(shuffled)}.`,
    `Meet the ${brand} ${type.name}: ${listPhrases(shuffled)}.`,
  ]);
  const notes = rng.shuffle(category.notes).slice(0, 2);
  return [lead, ...notes].join(' ');
}

function generateProduct(rng: Rng, category: CategorySpec, type: ProductTypeSpec, rank: number, index: number, asins: Set<string>): Product {
  let asin: string;
  do {
    asin = `B0${Array.from({ length: 8 }, () => rng.pick(ASIN_CHARS)).join('')}`;
  } while (asins.has(asin));
  asins.add(asin);
  const brand = `${rng.pick(BRAND_HEADS)}${rng.pick(BRAND_TAILS)}`;
  const attributes = subset(rng, type.attributes, 3, 5);
  // The title names the type and at most two attributes; the description names them all.
  const shown = rng.shuffle(attributes).slice(0, rng.int(0, 2));
  const extra = rng.next() < 0.7 ? ` - ${rng.pick(type.extras)}` : '';
  const title = `${brand} ${shown[0] ? `${titleCase(shown[0])} ` : ''}${type.title}${shown[1] ? `, ${titleCase(shown[1])}` : ''}${extra}`;
  const options = Object.entries(type.options).map(([name, values]) => ({ name, values: subset(rng, values, Math.ceil(values.length / 2), values.length) }));
  const priceCents = rng.int(type.price[0], type.price[1] - 1) * 100 + rng.pick(CENTS);
  return {
    asin,
    index,
    category: category.id,
    categoryName: category.name,
    type: type.name,
    rank,
    brand,
    title,
    description: describe(rng, category, type, brand, attributes),
    attributes,
    options,
    priceCents,
  };
}

/** Generates the products from `seed`: department by department, type by type, {@link PRODUCTS_PER_TYPE} each. */
export function generateProducts(seed: number = CATALOGUE_SEED): Product[] {
  const rng = new Rng(seed);
  const asins = new Set<string>();
  const products: Product[] = [];
  for (const category of CATEGORIES) {
    for (const type of category.types) {
      for (let rank = 0; rank < PRODUCTS_PER_TYPE; rank++) products.push(generateProduct(rng, category, type, rank, products.length, asins));
    }
  }
  return products;
}

/** The text the search engine indexes for a product: its title and description. */
export function searchText(product: Product): string {
  return `${product.title} ${product.description}`;
}

let cached: Catalogue | undefined;

/** The store, built on first use and shared by every environment of the process. */
export function getCatalogue(): Catalogue {
  if (cached) return cached;
  const products = generateProducts();
  cached = { products, byAsin: new Map(products.map((p) => [p.asin, p])), index: new Bm25Index(products.map(searchText)) };
  return cached;
}
