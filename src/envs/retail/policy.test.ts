import { describe, expect, it } from 'vitest';
import type { Action } from '../../core/types.js';
import type { Order, User } from './database.js';
import { PolicyGuard, RETAIL_POLICY } from './policy.js';
import { getRetailTask } from './tasks.js';

const task = getRetailTask('retail-train-00000');
const db = task.db;
const me = db.users[task.userId] as User;
const other = Object.values(db.users).find((u) => u.user_id !== me.user_id) as User;
const myOrder = me.orders[0] as string;
const theirOrder = other.orders[0] as string;
const cancel = (orderId: string): Action => ({ tool: 'cancel_pending_order', params: { order_id: orderId, reason: 'no longer needed' } });

describe('PolicyGuard', () => {
  it('allows only talk and the catalogue before authentication, and authenticates only with what the customer said', () => {
    const g = new PolicyGuard();
    for (const tool of ['respond', 'think', 'list_all_product_types']) expect(g.check({ tool, params: {} }, db, [], 1)).toBeUndefined();
    expect(g.check({ tool: 'get_order_details', params: { order_id: myOrder } }, db, [], 1)?.rule).toBe('unauthenticated');
    expect(g.check({ tool: 'transfer_to_human_agents', params: { summary: 's' } }, db, [], 1)?.rule).toBe('unauthenticated');
    const byEmail: Action = { tool: 'find_user_id_by_email', params: { email: me.email } };
    expect(g.check(byEmail, db, ['Hi, I want to cancel an order.'], 2)?.rule).toBe('unverified_identity');
    expect(g.check(byEmail, db, [`It's ${me.email.toUpperCase()}.`], 3)).toBeUndefined();
    const byName: Action = { tool: 'find_user_id_by_name_zip', params: { first_name: me.name.first_name, last_name: me.name.last_name, zip: '99999' } };
    expect(g.check(byName, db, [`I am ${me.name.first_name} ${me.name.last_name}.`], 4)?.message).toMatch(/did not tell you '99999'/);
    expect(g.violations.map((v) => [v.step, v.rule])).toEqual([[1, 'unauthenticated'], [1, 'unauthenticated'], [2, 'unverified_identity'], [4, 'unverified_identity']]);
  });

  it("refuses another customer's details and orders, and a second identity", () => {
    const g = new PolicyGuard();
    expect(g.ran({ tool: 'find_user_id_by_email', params: { email: me.email } }, me.user_id, 1)).toBeUndefined();
    expect(g.authenticated).toBe(me.user_id);
    expect(g.check({ tool: 'get_order_details', params: { order_id: myOrder } }, db, [], 2)).toBeUndefined();
    expect(g.check({ tool: 'get_order_details', params: { order_id: theirOrder } }, db, [], 3)?.rule).toBe('other_user');
    expect(g.check({ tool: 'get_user_details', params: { user_id: other.user_id } }, db, [], 4)?.rule).toBe('other_user');
    // An id the store does not know is the store's to refuse, not a violation.
    expect(g.check({ tool: 'get_order_details', params: { order_id: '#W0' } }, db, [], 5)).toBeUndefined();
    expect(g.ran({ tool: 'find_user_id_by_email', params: { email: other.email } }, other.user_id, 6)?.rule).toBe('other_user');
    expect(g.authenticated).toBe(me.user_id);
  });

  it('lets a change through only after a yes to a confirmation request naming its order; one yes, one change', () => {
    const g = new PolicyGuard();
    g.ran({ tool: 'find_user_id_by_email', params: { email: me.email } }, me.user_id, 1);
    expect(g.check(cancel(myOrder), db, [], 2)?.rule).toBe('unconfirmed');
    g.onUserTurn(`Shall I cancel order ${myOrder}?`, 'No, wait.');
    expect(g.check(cancel(myOrder), db, [], 3)?.rule).toBe('unconfirmed');
    g.onUserTurn('Shall I cancel your order?', 'Yes.');
    expect(g.check(cancel(myOrder), db, [], 4)?.message).toMatch(new RegExp(`naming order ${myOrder}`));
    g.onUserTurn(`Shall I cancel order ${myOrder.slice(1)}? Please confirm.`, 'Yes, go ahead.');
    // Messages that ask nothing do not withdraw the yes.
    g.onUserTurn('One moment.', 'Sure.');
    expect(g.check(cancel(theirOrder), db, [], 5)?.rule).toBe('other_user');
    expect(g.check(cancel(myOrder), db, [], 6)).toBeUndefined();
    g.ran(cancel(myOrder), '{}', 6);
    expect(g.check(cancel(myOrder), db, [], 7)?.rule).toBe('unconfirmed');
    const address: Action = { tool: 'modify_user_address', params: { user_id: me.user_id, address1: '1 Main St', address2: '', city: 'X', state: 'CA', country: 'USA', zip: '90001' } };
    g.onUserTurn('Do you want me to change your address to 1 Main St, 90001?', 'Yes');
    expect(g.check(address, db, [], 8)).toBeUndefined();
  });

  it('states the rules it enforces in the policy the agent reads', () => {
    expect(RETAIL_POLICY).toMatch(/Authenticate first/);
    expect(RETAIL_POLICY).toMatch(/Never look up or change another customer's details or orders/);
    expect(RETAIL_POLICY).toMatch(/ask them to confirm, and act only after they answer yes/);
    expect((db.orders[myOrder] as Order).user_id).toBe(me.user_id);
  });
});
