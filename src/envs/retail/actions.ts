import type { Action } from '../../core/types.js';
import { PRODUCTS, productById, productOfItem } from './catalog.js';
import { type Address, cents, type Order, type PaymentMethod, type RetailDb, type User } from './database.js';

/**
 * What the retail tools do to the database, after tau-bench's retail tools (`tau_bench/envs/retail/tools`):
 * the reads return JSON, the writes check the order's status and their arguments, change the database and
 * return the order. A call the store refuses (an unknown id, a non-pending order, an unavailable item, a
 * gift card short of money, a refund to a method that is neither the original nor a gift card) throws a
 * {@link RetailToolError} and changes nothing. The environment runs the agent's calls through here, and
 * the reward replays the task's gold calls through here, so both meet the same rules.
 */

/** A call the store refuses; its message is the observation (`Error: …`). */
export class RetailToolError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'RetailToolError';
  }
}

const fail = (code: string, message: string): never => {
  throw new RetailToolError(code, message);
};

const json = (value: unknown): string => JSON.stringify(value);

function order(db: RetailDb, id: unknown): Order {
  return db.orders[String(id)] ?? fail('order_not_found', `order '${String(id)}' not found`);
}

function user(db: RetailDb, id: unknown): User {
  return db.users[String(id)] ?? fail('user_not_found', `user '${String(id)}' not found`);
}

function method(u: User, id: unknown): PaymentMethod {
  return u.payment_methods[String(id)] ?? fail('payment_method_not_found', `payment method '${String(id)}' not found for user ${u.user_id}`);
}

function address(p: Record<string, unknown>): Address {
  return { address1: String(p.address1), address2: String(p.address2), city: String(p.city), state: String(p.state), country: String(p.country), zip: String(p.zip) };
}

/** Checks that `itemIds` are lines of the order (an id twice needs two such lines) and returns their indices. */
function lines(o: Order, itemIds: readonly unknown[]): number[] {
  const used = new Set<number>();
  return itemIds.map((id) => {
    const at = o.items.findIndex((item, i) => !used.has(i) && item.item_id === String(id));
    if (at < 0) fail('item_not_found', `item '${String(id)}' is not in order ${o.order_id} (or not that many times)`);
    used.add(at);
    return at;
  });
}

/** The price difference of replacing the lines `at` of `o` by `newIds` (same products, available); throws otherwise. */
function priceDifference(o: Order, at: readonly number[], newIds: readonly unknown[]): number {
  if (newIds.length !== at.length) fail('length_mismatch', `item_ids and new_item_ids must have the same length (${at.length} and ${newIds.length})`);
  let diff = 0;
  at.forEach((i, k) => {
    const old = o.items[i] as Order['items'][number];
    const newId = String(newIds[k]);
    const product = productById(old.product_id);
    const variant = product?.variants[newId];
    if (!variant) fail('item_not_found', `new item '${newId}' is not a variant of ${old.name} (product ${old.product_id})`);
    else {
      if (newId === old.item_id) fail('same_item', `new item '${newId}' is the item it replaces`);
      if (!variant.available) fail('item_unavailable', `new item '${newId}' is not available`);
      diff += variant.price - old.price;
    }
  });
  return cents(diff);
}

function charge(u: User, pmId: unknown, amount: number): PaymentMethod {
  const pm = method(u, pmId);
  if (pm.source === 'gift_card' && pm.balance < amount) fail('insufficient_balance', `gift card ${pm.id} has ${pm.balance.toFixed(2)}, not enough for ${amount.toFixed(2)}`);
  return pm;
}

/**
 * Runs a retail tool (not `respond`, `think` or the transfer) on `db`, changing it for a write; returns the
 * observation. Throws a {@link RetailToolError} for a call the store refuses.
 */
export function runRetailTool(db: RetailDb, action: Action): string {
  const p = action.params;
  switch (action.tool) {
    case 'find_user_id_by_email': {
      const email = String(p.email).trim().toLowerCase();
      const found = Object.values(db.users).find((u) => u.email.toLowerCase() === email);
      return found ? found.user_id : fail('user_not_found', `no user with email '${String(p.email)}'`);
    }
    case 'find_user_id_by_name_zip': {
      const [first, last, zip] = [String(p.first_name).trim().toLowerCase(), String(p.last_name).trim().toLowerCase(), String(p.zip).trim()];
      const found = Object.values(db.users).find((u) => u.name.first_name.toLowerCase() === first && u.name.last_name.toLowerCase() === last && u.address.zip === zip);
      return found ? found.user_id : fail('user_not_found', `no user named ${String(p.first_name)} ${String(p.last_name)} with zip code ${String(p.zip)}`);
    }
    case 'get_user_details':
      return json(user(db, p.user_id));
    case 'get_order_details':
      return json(order(db, p.order_id));
    case 'get_product_details':
      return json(productById(String(p.product_id)) ?? fail('product_not_found', `product '${String(p.product_id)}' not found`));
    case 'list_all_product_types':
      return json(Object.fromEntries(PRODUCTS.map((x) => [x.name, x.product_id])));
    case 'cancel_pending_order': {
      const o = order(db, p.order_id);
      if (o.status !== 'pending') fail('not_pending', `order ${o.order_id} is ${o.status}; only a pending order can be cancelled`);
      const u = user(db, o.user_id);
      for (const payment of o.payment_history.filter((x) => x.transaction_type === 'payment')) {
        o.payment_history.push({ transaction_type: 'refund', amount: payment.amount, payment_method_id: payment.payment_method_id });
        const pm = u.payment_methods[payment.payment_method_id];
        if (pm?.source === 'gift_card') pm.balance = cents(pm.balance + payment.amount);
      }
      o.status = 'cancelled';
      o.cancel_reason = String(p.reason);
      return json(o);
    }
    case 'modify_pending_order_address': {
      const o = order(db, p.order_id);
      if (o.status !== 'pending') fail('not_pending', `order ${o.order_id} is ${o.status}; only a pending order can be modified`);
      o.address = address(p);
      return json(o);
    }
    case 'modify_pending_order_payment': {
      const o = order(db, p.order_id);
      if (o.status !== 'pending') fail('not_pending', `order ${o.order_id} is ${o.status}; only a pending order can be modified`);
      const payments = o.payment_history.filter((x) => x.transaction_type === 'payment');
      if (payments.length !== 1) fail('several_payments', `order ${o.order_id} was paid in ${payments.length} payments; its payment method cannot be changed`);
      const old = payments[0] as Order['payment_history'][number];
      if (old.payment_method_id === String(p.payment_method_id)) fail('same_payment_method', `order ${o.order_id} is already paid with ${old.payment_method_id}`);
      const u = user(db, o.user_id);
      const pm = charge(u, p.payment_method_id, old.amount);
      o.payment_history.push({ transaction_type: 'payment', amount: old.amount, payment_method_id: pm.id }, { transaction_type: 'refund', amount: old.amount, payment_method_id: old.payment_method_id });
      if (pm.source === 'gift_card') pm.balance = cents(pm.balance - old.amount);
      const back = u.payment_methods[old.payment_method_id];
      if (back?.source === 'gift_card') back.balance = cents(back.balance + old.amount);
      return json(o);
    }
    case 'modify_pending_order_items':
    case 'exchange_delivered_order_items': {
      const o = order(db, p.order_id);
      const modify = action.tool === 'modify_pending_order_items';
      if (modify && o.status !== 'pending') fail('not_pending', `order ${o.order_id} is ${o.status}; only a pending order's items can be modified, once`);
      if (!modify && o.status !== 'delivered') fail('not_delivered', `order ${o.order_id} is ${o.status}; only a delivered order's items can be exchanged, once`);
      const oldIds = p.item_ids as unknown[];
      const newIds = p.new_item_ids as unknown[];
      const at = lines(o, oldIds);
      const diff = priceDifference(o, at, newIds);
      const u = user(db, o.user_id);
      const pm = charge(u, p.payment_method_id, Math.max(0, diff));
      if (!modify) {
        o.status = 'exchange requested';
        o.exchange_items = oldIds.map(String).sort();
        o.exchange_new_items = newIds.map(String).sort();
        o.exchange_payment_method_id = pm.id;
        o.exchange_price_difference = diff;
        return json(o);
      }
      o.payment_history.push({ transaction_type: diff > 0 ? 'payment' : 'refund', amount: Math.abs(diff), payment_method_id: pm.id });
      if (pm.source === 'gift_card') pm.balance = cents(pm.balance - diff);
      at.forEach((i, k) => {
        const line = o.items[i] as Order['items'][number];
        const variant = productOfItem(String(newIds[k]))?.variants[String(newIds[k])];
        if (variant) Object.assign(line, { item_id: variant.item_id, price: variant.price, options: { ...variant.options } });
      });
      o.status = 'pending (item modified)';
      return json(o);
    }
    case 'modify_user_address': {
      const u = user(db, p.user_id);
      u.address = address(p);
      return json(u);
    }
    case 'return_delivered_order_items': {
      const o = order(db, p.order_id);
      if (o.status !== 'delivered') fail('not_delivered', `order ${o.order_id} is ${o.status}; only a delivered order's items can be returned`);
      const u = user(db, o.user_id);
      const pm = method(u, p.payment_method_id);
      const original = o.payment_history[0]?.payment_method_id;
      if (pm.id !== original && pm.source !== 'gift_card') fail('refund_method', `a refund goes to the original payment method (${original ?? 'none'}) or a gift card, not ${pm.id}`);
      lines(o, p.item_ids as unknown[]);
      o.status = 'return requested';
      o.return_items = (p.item_ids as unknown[]).map(String).sort();
      o.return_payment_method_id = pm.id;
      return json(o);
    }
    default:
      return fail('unknown_tool', `'${action.tool}' is not a store tool`);
  }
}
