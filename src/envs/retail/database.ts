import { canonicalJson } from '../../core/canonical.js';
import type { Rng } from '../../core/rng.js';
import { PRODUCTS, type Product, type Variant } from './catalog.js';

/**
 * The retail store's database, tau-bench's retail schema: users (name, address, email, payment methods,
 * order ids) and orders (items, status, payment history, fulfilments, and the fields a cancellation, an
 * item change, a return or an exchange writes). The products are the shared catalogue (`catalog.ts`).
 * Each task has its own users and orders, generated from the task's seed.
 */

/** A postal address. */
export interface Address {
  address1: string;
  address2: string;
  city: string;
  state: string;
  country: string;
  zip: string;
}

/** A payment method: a credit card, a PayPal account or a gift card (with its balance). */
export type PaymentMethod =
  | { source: 'credit_card'; id: string; brand: string; last_four: string }
  | { source: 'paypal'; id: string }
  | { source: 'gift_card'; id: string; balance: number };

/** A customer. */
export interface User {
  user_id: string;
  name: { first_name: string; last_name: string };
  address: Address;
  email: string;
  payment_methods: Record<string, PaymentMethod>;
  orders: string[];
}

/** One line of an order. */
export interface OrderItem {
  name: string;
  product_id: string;
  item_id: string;
  price: number;
  options: Record<string, string>;
}

/** The statuses of an order: the four a task starts from and those the write tools set. */
export type OrderStatus = 'pending' | 'processed' | 'delivered' | 'cancelled' | 'pending (item modified)' | 'return requested' | 'exchange requested';

/** An order and what was done to it. */
export interface Order {
  order_id: string;
  user_id: string;
  address: Address;
  items: OrderItem[];
  status: OrderStatus;
  fulfillments: { tracking_id: string[]; item_ids: string[] }[];
  payment_history: { transaction_type: 'payment' | 'refund'; amount: number; payment_method_id: string }[];
  cancel_reason?: string;
  return_items?: string[];
  return_payment_method_id?: string;
  exchange_items?: string[];
  exchange_new_items?: string[];
  exchange_payment_method_id?: string;
  exchange_price_difference?: number;
}

/** The mutable part of the store (products are shared and never change). */
export interface RetailDb {
  users: Record<string, User>;
  orders: Record<string, Order>;
}

/** Money as the store writes it: rounded to cents. */
export function cents(x: number): number {
  return Math.round(x * 100) / 100;
}

/** A price as said to a customer: `1234.5` → `1234.50`. */
export function money(x: number): string {
  return x.toFixed(2);
}

/** A deep copy of a database (tasks keep their initial database; each episode writes a copy). */
export function cloneDb(db: RetailDb): RetailDb {
  return structuredClone(db);
}

/** Whether two databases hold the same data (canonical JSON, so key order does not matter). */
export function sameDb(a: RetailDb, b: RetailDb): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The users and orders that differ between two databases (`orders/#W1234567`), for `info`. */
export function dbDiff(a: RetailDb, b: RetailDb): string[] {
  const out: string[] = [];
  for (const table of ['users', 'orders'] as const) {
    const keys = new Set([...Object.keys(a[table]), ...Object.keys(b[table])]);
    for (const key of [...keys].sort()) if (canonicalJson(a[table][key]) !== canonicalJson(b[table][key])) out.push(`${table}/${key}`);
  }
  return out;
}

/** Where people live: city, state and the first three digits of its zip codes. */
const PLACES = [
  ['Austin', 'TX', '787'], ['Denver', 'CO', '802'], ['Seattle', 'WA', '981'], ['Portland', 'OR', '972'], ['Boston', 'MA', '021'],
  ['Chicago', 'IL', '606'], ['Phoenix', 'AZ', '850'], ['Atlanta', 'GA', '303'], ['Columbus', 'OH', '432'], ['Charlotte', 'NC', '282'],
  ['San Diego', 'CA', '921'], ['Nashville', 'TN', '372'], ['Madison', 'WI', '537'], ['Raleigh', 'NC', '276'], ['Tucson', 'AZ', '857'],
] as const;
const STREETS = ['Maple Drive', 'Oak Street', 'Cedar Lane', 'Elm Avenue', 'Pine Court', 'Lakeview Road', 'Hillcrest Way', 'River Road', 'Sunset Boulevard', 'Park Place', 'Willow Street', 'Highland Avenue'];
const CARD_BRANDS = ['Visa', 'Mastercard', 'Amex'];

/** The names one split's users are drawn from (first names differ between splits; see `tasks.ts`). */
export interface NamePool {
  first: readonly string[];
  last: readonly string[];
}

function digits(rng: Rng, n: number): string {
  let s = String(rng.int(1, 9));
  while (s.length < n) s += String(rng.int(0, 9));
  return s;
}

/** A random address (`zip` given or drawn). */
export function randomAddress(rng: Rng): Address {
  const [city, state, zip3] = rng.pick(PLACES);
  return {
    address1: `${rng.int(10, 999)} ${rng.pick(STREETS)}`,
    address2: `Suite ${rng.int(100, 999)}`,
    city,
    state,
    country: 'USA',
    zip: `${zip3}${String(rng.int(0, 99)).padStart(2, '0')}`,
  };
}

const STATUSES: readonly OrderStatus[] = ['pending', 'pending', 'processed', 'delivered', 'delivered', 'cancelled'];

/** An order of 1–3 different products, paid with one of the user's methods. */
function randomOrder(rng: Rng, user: User, orderId: string, status: OrderStatus): Order {
  const products = rng.shuffle(PRODUCTS).slice(0, rng.int(1, 3));
  const items: OrderItem[] = products.map((p: Product) => {
    const v = rng.pick(Object.values(p.variants)) as Variant;
    return { name: p.name, product_id: p.product_id, item_id: v.item_id, price: v.price, options: { ...v.options } };
  });
  const total = cents(items.reduce((s, i) => s + i.price, 0));
  // Gift cards pay only what they can; a user whose only method is a gift card gets it topped up first.
  const methods = Object.values(user.payment_methods);
  const payer = rng.pick(methods);
  if (payer.source === 'gift_card' && payer.balance < total) payer.balance = cents(payer.balance + total);
  const order: Order = {
    order_id: orderId,
    user_id: user.user_id,
    address: { ...user.address },
    items,
    status,
    fulfillments: [],
    payment_history: [{ transaction_type: 'payment', amount: total, payment_method_id: payer.id }],
  };
  if (status === 'processed' || status === 'delivered') order.fulfillments.push({ tracking_id: [digits(rng, 12)], item_ids: items.map((i) => i.item_id) });
  if (status === 'cancelled') {
    order.cancel_reason = rng.pick(['no longer needed', 'ordered by mistake']);
    order.payment_history.push({ transaction_type: 'refund', amount: total, payment_method_id: payer.id });
    if (payer.source === 'gift_card') payer.balance = cents(payer.balance + total);
  }
  return order;
}

/**
 * A store's users and orders: `users` customers with distinct names, each with 1–3 payment methods and
 * 2–4 orders of mixed statuses. Gift-card balances leave room for payments (10–300).
 */
export function generateDatabase(rng: Rng, names: NamePool, users = 4): RetailDb {
  const db: RetailDb = { users: {}, orders: {} };
  const taken = new Set<string>();
  const ids = new Set<string>();
  const fresh = (make: () => string): string => {
    for (;;) {
      const id = make();
      if (!ids.has(id)) {
        ids.add(id);
        return id;
      }
    }
  };
  for (let u = 0; u < users; u++) {
    let first: string;
    let last: string;
    do {
      first = rng.pick(names.first);
      last = rng.pick(names.last);
    } while (taken.has(first) || taken.has(`${first} ${last}`));
    // First names are unique in a store, so a name and a zip code identify a user beyond doubt.
    taken.add(first);
    taken.add(`${first} ${last}`);
    const user_id = `${first.toLowerCase()}_${last.toLowerCase()}_${rng.int(1000, 9999)}`;
    const user: User = {
      user_id,
      name: { first_name: first, last_name: last },
      address: randomAddress(rng),
      email: `${first.toLowerCase()}.${last.toLowerCase()}${rng.int(10, 99)}@example.com`,
      payment_methods: {},
      orders: [],
    };
    const sources = rng.shuffle(['credit_card', 'paypal', 'gift_card'] as const).slice(0, rng.int(1, 3));
    for (const source of sources) {
      const id = fresh(() => `${source}_${digits(rng, 7)}`);
      user.payment_methods[id] =
        source === 'credit_card'
          ? { source, id, brand: rng.pick(CARD_BRANDS), last_four: digits(rng, 4) }
          : source === 'paypal'
            ? { source, id }
            : { source, id, balance: cents(rng.int(10, 300) + rng.int(0, 99) / 100) };
    }
    const n = rng.int(2, 4);
    for (let o = 0; o < n; o++) {
      const order = randomOrder(rng, user, fresh(() => `#W${digits(rng, 7)}`), rng.pick(STATUSES));
      db.orders[order.order_id] = order;
      user.orders.push(order.order_id);
    }
    db.users[user_id] = user;
  }
  return db;
}

/** A payment method as a customer names it: `Visa card ending in 1234`, `PayPal account`, `gift card`. */
export function describePaymentMethod(pm: PaymentMethod): string {
  if (pm.source === 'credit_card') return `${pm.brand} card ending in ${pm.last_four}`;
  return pm.source === 'paypal' ? 'PayPal account' : 'gift card';
}

/** A word that singles a payment method out in a message: its last four digits, `paypal` or `gift card`. */
export function paymentMethodCue(pm: PaymentMethod): string {
  if (pm.source === 'credit_card') return pm.last_four;
  return pm.source === 'paypal' ? 'paypal' : 'gift card';
}
