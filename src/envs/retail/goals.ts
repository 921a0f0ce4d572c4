import type { Action } from '../../core/types.js';
import { productById, type Variant } from './catalog.js';
import { type Address, money, type Order, type RetailDb, type User } from './database.js';
import { TRANSFER_TOOL } from './tools.js';

/**
 * What a retail customer can want: the goals a task is made of, what each one's gold action is and what
 * the agent must tell. `tasks.ts` draws them; `user-script.ts` words them for the simulated user.
 */

/** A cancellation reason the store accepts. */
export type CancelReason = 'no longer needed' | 'ordered by mistake';

/** One line to change: the order line's item and the variant it becomes. */
export interface ItemChange {
  itemId: string;
  newItemId: string;
}

/** The information a customer may ask for. */
export type InfoQuestion = 'tracking' | 'total' | 'gift_balance';

/** A goal of a retail customer. */
export type RetailGoal =
  | { kind: 'cancel'; orderId: string; reason: CancelReason }
  | { kind: 'modify_address'; orderId: string; address: Address }
  | { kind: 'modify_payment'; orderId: string; paymentMethodId: string }
  | { kind: 'modify_items'; orderId: string; changes: ItemChange[]; paymentMethodId: string }
  | { kind: 'return'; orderId: string; itemIds: string[]; paymentMethodId: string }
  | { kind: 'exchange'; orderId: string; changes: ItemChange[]; paymentMethodId: string }
  | { kind: 'user_address'; address: Address }
  | { kind: 'info'; question: InfoQuestion; orderId?: string }
  | { kind: 'transfer'; orderId: string; productName: string }
  | { kind: 'foreign'; orderId: string; friend: string };

/** The kinds of goals, which are also the kinds of tasks (but `foreign`, only ever a second goal). */
export type RetailGoalKind = RetailGoal['kind'];

/** A goal as the user pursues it: whether it knows the order id, and the goal it asks for first when it changes its mind. */
export interface PursuedGoal {
  goal: RetailGoal;
  /** The user can say the order id; else it describes the order by a product in it. */
  knowsOrderId: boolean;
  /** A product only this order of the user's has (how the user describes it when it forgets the id). */
  orderHint?: string;
  /** The user first asks for this, then changes its mind at the agent's confirmation request. */
  initially?: RetailGoal;
}

/** The order a goal is about, if any. */
export function goalOrder(goal: RetailGoal): string | undefined {
  return 'orderId' in goal ? goal.orderId : undefined;
}

/** Whether the goal changes the database (and so needs a confirmation). */
export function isWriteGoal(goal: RetailGoal): boolean {
  return !['info', 'transfer', 'foreign'].includes(goal.kind);
}

const addressParams = (a: Address): Record<string, string> => ({ address1: a.address1, address2: a.address2, city: a.city, state: a.state, country: a.country, zip: a.zip });

/** The tool call that achieves a goal (undefined for a goal that changes nothing). */
export function goldAction(goal: RetailGoal, userId: string): Action | undefined {
  switch (goal.kind) {
    case 'cancel':
      return { tool: 'cancel_pending_order', params: { order_id: goal.orderId, reason: goal.reason } };
    case 'modify_address':
      return { tool: 'modify_pending_order_address', params: { order_id: goal.orderId, ...addressParams(goal.address) } };
    case 'modify_payment':
      return { tool: 'modify_pending_order_payment', params: { order_id: goal.orderId, payment_method_id: goal.paymentMethodId } };
    case 'modify_items':
    case 'exchange':
      return {
        tool: goal.kind === 'exchange' ? 'exchange_delivered_order_items' : 'modify_pending_order_items',
        params: { order_id: goal.orderId, item_ids: goal.changes.map((c) => c.itemId), new_item_ids: goal.changes.map((c) => c.newItemId), payment_method_id: goal.paymentMethodId },
      };
    case 'return':
      return { tool: 'return_delivered_order_items', params: { order_id: goal.orderId, item_ids: [...goal.itemIds], payment_method_id: goal.paymentMethodId } };
    case 'user_address':
      return { tool: 'modify_user_address', params: { user_id: userId, ...addressParams(goal.address) } };
    case 'transfer':
      return { tool: TRANSFER_TOOL, params: { summary: `The customer's ${goal.productName} from order ${goal.orderId} arrived damaged; they want compensation without a return.` } };
    default:
      return undefined;
  }
}

/** What the agent must tell the user for an information goal (as the store writes it). */
export function goalOutputs(goal: RetailGoal, db: RetailDb, user: User): string[] {
  if (goal.kind !== 'info') return [];
  if (goal.question === 'gift_balance') {
    const gift = Object.values(user.payment_methods).find((m) => m.source === 'gift_card');
    return gift?.source === 'gift_card' ? [money(gift.balance)] : [];
  }
  const order = db.orders[goal.orderId ?? ''] as Order;
  if (goal.question === 'tracking') return [...(order.fulfillments[0]?.tracking_id ?? [])];
  return [money(order.payment_history[0]?.amount ?? 0)];
}

/** The variant an item id names (in the shared catalogue). */
export function variantOf(productId: string, itemId: string): Variant | undefined {
  return productById(productId)?.variants[itemId];
}
