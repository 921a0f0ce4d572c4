import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/rng.js';
import type { Action } from '../../core/types.js';
import { RetailToolError, runRetailTool } from './actions.js';
import { PRODUCTS, productById } from './catalog.js';
import { cloneDb, generateDatabase, type Order, type RetailDb, sameDb, type User } from './database.js';
import { NAME_POOLS } from './tasks.js';

/** A store with a user who has a pending and a delivered order, a gift card and another method. */
function store(): { db: RetailDb; user: User; pending: Order; delivered: Order; gift: string; other: string } {
  for (let seed = 1; seed < 500; seed++) {
    const db = generateDatabase(new Rng(seed), NAME_POOLS.train);
    for (const user of Object.values(db.users)) {
      const orders = user.orders.map((id) => db.orders[id] as Order);
      const pending = orders.find((o) => o.status === 'pending' && o.items.length >= 2);
      const delivered = orders.find((o) => o.status === 'delivered');
      const gift = Object.values(user.payment_methods).find((m) => m.source === 'gift_card');
      const other = Object.values(user.payment_methods).find((m) => m.source !== 'gift_card');
      if (pending && delivered && gift && other) return { db, user, pending, delivered, gift: gift.id, other: other.id };
    }
  }
  throw new Error('no suitable store');
}

const run = (db: RetailDb, tool: string, params: Record<string, unknown>): string => runRetailTool(db, { tool, params } as Action);
const refused = (db: RetailDb, tool: string, params: Record<string, unknown>): string => {
  const before = cloneDb(db);
  try {
    run(db, tool, params);
  } catch (err) {
    expect(err).toBeInstanceOf(RetailToolError);
    expect(sameDb(db, before)).toBe(true);
    return (err as RetailToolError).code;
  }
  throw new Error(`${tool} was not refused`);
};

/** Another available variant of the product of an order line. */
function otherVariant(line: Order['items'][number]): string {
  const v = Object.values(productById(line.product_id)?.variants ?? {}).find((x) => x.available && x.item_id !== line.item_id);
  if (!v) throw new Error('no other variant');
  return v.item_id;
}

describe('retail tools', () => {
  it('find users by email or by name and zip, and read users, orders and products as JSON', () => {
    const { db, user, pending } = store();
    expect(run(db, 'find_user_id_by_email', { email: user.email.toUpperCase() })).toBe(user.user_id);
    expect(run(db, 'find_user_id_by_name_zip', { first_name: user.name.first_name.toLowerCase(), last_name: user.name.last_name, zip: user.address.zip })).toBe(user.user_id);
    expect(refused(db, 'find_user_id_by_name_zip', { first_name: user.name.first_name, last_name: user.name.last_name, zip: '00000' })).toBe('user_not_found');
    expect(JSON.parse(run(db, 'get_user_details', { user_id: user.user_id }))).toEqual(user);
    expect(JSON.parse(run(db, 'get_order_details', { order_id: pending.order_id }))).toEqual(pending);
    expect(refused(db, 'get_order_details', { order_id: '#W0' })).toBe('order_not_found');
    expect(Object.keys(JSON.parse(run(db, 'list_all_product_types', {})) as object)).toHaveLength(PRODUCTS.length);
    expect(JSON.parse(run(db, 'get_product_details', { product_id: PRODUCTS[0]?.product_id }))).toEqual(PRODUCTS[0]);
  });

  it('cancels only a pending order, refunding every payment (a gift card at once)', () => {
    const { db, user, pending, delivered } = store();
    expect(refused(db, 'cancel_pending_order', { order_id: delivered.order_id, reason: 'no longer needed' })).toBe('not_pending');
    const paid = pending.payment_history[0] as Order['payment_history'][number];
    const pm = user.payment_methods[paid.payment_method_id];
    const before = pm?.source === 'gift_card' ? pm.balance : 0;
    const out = JSON.parse(run(db, 'cancel_pending_order', { order_id: pending.order_id, reason: 'ordered by mistake' })) as Order;
    expect(out).toMatchObject({ status: 'cancelled', cancel_reason: 'ordered by mistake' });
    expect(out.payment_history.at(-1)).toEqual({ transaction_type: 'refund', amount: paid.amount, payment_method_id: paid.payment_method_id });
    const after = db.users[user.user_id]?.payment_methods[paid.payment_method_id];
    if (after?.source === 'gift_card') expect(after.balance).toBeCloseTo(before + paid.amount, 2);
    expect(refused(db, 'cancel_pending_order', { order_id: pending.order_id, reason: 'ordered by mistake' })).toBe('not_pending');
  });

  it('changes the payment of a pending order to another method that can pay', () => {
    const { db, user, pending, gift, other } = store();
    const current = pending.payment_history[0]?.payment_method_id as string;
    expect(refused(db, 'modify_pending_order_payment', { order_id: pending.order_id, payment_method_id: current })).toBe('same_payment_method');
    expect(refused(db, 'modify_pending_order_payment', { order_id: pending.order_id, payment_method_id: 'paypal_0' })).toBe('payment_method_not_found');
    const card = db.users[user.user_id]?.payment_methods[gift];
    if (card?.source === 'gift_card' && current !== gift) {
      card.balance = 0.01;
      expect(refused(db, 'modify_pending_order_payment', { order_id: pending.order_id, payment_method_id: gift })).toBe('insufficient_balance');
    }
    const target = current === other ? gift : other;
    if (card?.source === 'gift_card') card.balance = 10_000;
    const amount = pending.payment_history[0]?.amount;
    const out = JSON.parse(run(db, 'modify_pending_order_payment', { order_id: pending.order_id, payment_method_id: target })) as Order;
    expect(out.payment_history.slice(-2)).toEqual([
      { transaction_type: 'payment', amount, payment_method_id: target },
      { transaction_type: 'refund', amount, payment_method_id: current },
    ]);
  });

  it("modifies a pending order's items once, to available variants of the same product, settling the difference", () => {
    const { db, pending, other } = store();
    const [a, b] = pending.items as [Order['items'][number], Order['items'][number]];
    expect(refused(db, 'modify_pending_order_items', { order_id: pending.order_id, item_ids: [a.item_id], new_item_ids: [otherVariant(b)], payment_method_id: other })).toBe('item_not_found');
    expect(refused(db, 'modify_pending_order_items', { order_id: pending.order_id, item_ids: [a.item_id], new_item_ids: [a.item_id], payment_method_id: other })).toBe('same_item');
    expect(refused(db, 'modify_pending_order_items', { order_id: pending.order_id, item_ids: [a.item_id, a.item_id], new_item_ids: [otherVariant(a), otherVariant(a)], payment_method_id: other })).toMatch(/item_not_found|length_mismatch/);
    const unavailable = Object.values(productById(a.product_id)?.variants ?? {}).find((v) => !v.available && v.item_id !== a.item_id);
    if (unavailable) expect(refused(db, 'modify_pending_order_items', { order_id: pending.order_id, item_ids: [a.item_id], new_item_ids: [unavailable.item_id], payment_method_id: other })).toBe('item_unavailable');
    const next = otherVariant(a);
    const price = productById(a.product_id)?.variants[next]?.price as number;
    const oldPrice = a.price;
    const out = JSON.parse(run(db, 'modify_pending_order_items', { order_id: pending.order_id, item_ids: [a.item_id], new_item_ids: [next], payment_method_id: other })) as Order;
    expect(out.status).toBe('pending (item modified)');
    expect(out.items[0]).toMatchObject({ item_id: next, price });
    const diff = Math.round((price - oldPrice) * 100) / 100;
    expect(out.payment_history.at(-1)).toEqual({ transaction_type: diff > 0 ? 'payment' : 'refund', amount: Math.abs(diff), payment_method_id: other });
    expect(refused(db, 'modify_pending_order_items', { order_id: pending.order_id, item_ids: [b.item_id], new_item_ids: [otherVariant(b)], payment_method_id: other })).toBe('not_pending');
    expect(refused(db, 'modify_pending_order_address', { order_id: pending.order_id, address1: 'x', address2: '', city: 'c', state: 's', country: 'USA', zip: '1' })).toBe('not_pending');
  });

  it('returns delivered items with the refund to the original method or a gift card only', () => {
    const { db, user, delivered, pending, gift, other } = store();
    const item = delivered.items[0]?.item_id as string;
    const original = delivered.payment_history[0]?.payment_method_id as string;
    expect(refused(db, 'return_delivered_order_items', { order_id: pending.order_id, item_ids: [item], payment_method_id: original })).toBe('not_delivered');
    const notOriginal = [other, ...Object.keys(user.payment_methods)].find((id) => id !== original && user.payment_methods[id]?.source !== 'gift_card');
    if (notOriginal) expect(refused(db, 'return_delivered_order_items', { order_id: delivered.order_id, item_ids: [item], payment_method_id: notOriginal })).toBe('refund_method');
    expect(refused(db, 'return_delivered_order_items', { order_id: delivered.order_id, item_ids: ['0'], payment_method_id: original })).toBe('item_not_found');
    const out = JSON.parse(run(db, 'return_delivered_order_items', { order_id: delivered.order_id, item_ids: [item], payment_method_id: gift })) as Order;
    expect(out).toMatchObject({ status: 'return requested', return_items: [item], return_payment_method_id: gift });
  });

  it('exchanges delivered items once', () => {
    const { db, delivered, other } = store();
    const line = delivered.items[0] as Order['items'][number];
    const next = otherVariant(line);
    const out = JSON.parse(run(db, 'exchange_delivered_order_items', { order_id: delivered.order_id, item_ids: [line.item_id], new_item_ids: [next], payment_method_id: other })) as Order;
    expect(out).toMatchObject({ status: 'exchange requested', exchange_items: [line.item_id], exchange_new_items: [next], exchange_payment_method_id: other });
    expect(refused(db, 'exchange_delivered_order_items', { order_id: delivered.order_id, item_ids: [line.item_id], new_item_ids: [next], payment_method_id: other })).toBe('not_delivered');
  });
});
