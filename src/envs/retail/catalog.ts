import { Rng } from '../../core/rng.js';

/**
 * The store's catalogue, the same in every task (as tau-bench's retail `products.json`): product types,
 * each with option dimensions and the variants the store stocks (an item id, its options, its price and
 * whether it is available). Generated once from a fixed seed, so ids and prices never change.
 */

/** One variant of a product: what an order line refers to by `item_id`. */
export interface Variant {
  item_id: string;
  options: Record<string, string>;
  available: boolean;
  price: number;
}

/** A product type with its variants (keyed by item id). */
export interface Product {
  name: string;
  product_id: string;
  variants: Record<string, Variant>;
}

/** The product types: name → option → values. Values are distinct words, so a message can name one. */
const PRODUCT_TYPES: readonly { name: string; base: number; options: Record<string, readonly string[]> }[] = [
  { name: 'T-Shirt', base: 24, options: { color: ['black', 'white', 'navy', 'red'], size: ['small', 'medium', 'large', 'oversized'] } },
  { name: 'Water Bottle', base: 18, options: { capacity: ['500ml', '750ml', '1000ml'], color: ['green', 'silver', 'black'] } },
  { name: 'Hiking Boots', base: 140, options: { size: ['EU 40', 'EU 41', 'EU 42', 'EU 43'], material: ['leather', 'synthetic'] } },
  { name: 'Desk Lamp', base: 45, options: { color: ['black', 'white', 'brass'], 'power source': ['battery', 'USB', 'AC adapter'] } },
  { name: 'Backpack', base: 70, options: { color: ['black', 'grey', 'olive'], material: ['nylon', 'polyester', 'canvas'] } },
  { name: 'Headphones', base: 120, options: { type: ['over-ear', 'in-ear'], connectivity: ['wireless', 'wired'], color: ['black', 'white', 'blue'] } },
  { name: 'Coffee Maker', base: 95, options: { capacity: ['4 cups', '8 cups', '12 cups'], type: ['drip', 'espresso', 'french press'] } },
  { name: 'Yoga Mat', base: 35, options: { thickness: ['4mm', '6mm', '8mm'], color: ['purple', 'green', 'blue'] } },
  { name: 'Office Chair', base: 210, options: { material: ['mesh', 'leather', 'fabric'], color: ['black', 'gray', 'blue'] } },
  { name: 'Smart Watch', base: 260, options: { color: ['black', 'silver', 'gold'], band: ['silicone', 'leather', 'metal'] } },
  { name: 'Sneakers', base: 85, options: { size: ['EU 39', 'EU 40', 'EU 41', 'EU 42'], color: ['white', 'black', 'red'] } },
  { name: 'Tea Kettle', base: 40, options: { material: ['stainless steel', 'glass', 'ceramic'], stovetop: ['gas', 'induction'] } },
  { name: 'Bluetooth Speaker', base: 75, options: { color: ['black', 'red', 'blue'], 'water resistance': ['splashproof', 'waterproof'] } },
  { name: 'Jigsaw Puzzle', base: 22, options: { pieces: ['500 pieces', '1000 pieces', '2000 pieces'], theme: ['animals', 'landscape', 'art'] } },
];

const CATALOG_SEED = 0x7e7a11;

function digits(rng: Rng, n: number): string {
  let s = String(rng.int(1, 9));
  while (s.length < n) s += String(rng.int(0, 9));
  return s;
}

function combinations(options: Record<string, readonly string[]>): Record<string, string>[] {
  let out: Record<string, string>[] = [{}];
  for (const [key, values] of Object.entries(options)) out = out.flatMap((o) => values.map((v) => ({ ...o, [key]: v })));
  return out;
}

function build(): Product[] {
  const rng = new Rng(CATALOG_SEED);
  const ids = new Set<string>();
  const fresh = (n: number): string => {
    for (;;) {
      const id = digits(rng, n);
      if (!ids.has(id)) {
        ids.add(id);
        return id;
      }
    }
  };
  return PRODUCT_TYPES.map((type) => {
    const product_id = fresh(10);
    // Most combinations are stocked; about one in five of those is sold out.
    const combos = combinations(type.options).filter((_, i) => i < 2 || rng.next() < 0.75);
    const variants: Record<string, Variant> = {};
    for (const options of combos) {
      const item_id = fresh(10);
      const price = Math.round(type.base * (0.8 + rng.next() * 0.5) * 100) / 100;
      variants[item_id] = { item_id, options, available: rng.next() < 0.8, price };
    }
    return { name: type.name, product_id, variants };
  });
}

/** The catalogue (see the module comment), ordered as listed by `list_all_product_types`. */
export const PRODUCTS: readonly Product[] = build();

const BY_ID = new Map(PRODUCTS.map((p) => [p.product_id, p]));
const ITEM_PRODUCT = new Map(PRODUCTS.flatMap((p) => Object.keys(p.variants).map((id) => [id, p] as const)));

/** The product with this id, if any. */
export function productById(id: string): Product | undefined {
  return BY_ID.get(id);
}

/** The product an item (variant) belongs to, if any. */
export function productOfItem(itemId: string): Product | undefined {
  return ITEM_PRODUCT.get(itemId);
}

/** `color: navy, size: large` — how options are written in messages and instructions. */
export function describeOptions(options: Record<string, string>): string {
  return Object.entries(options).map(([k, v]) => `${k}: ${v}`).join(', ');
}
