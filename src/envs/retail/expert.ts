import type { Action, TaskInfo } from '../../core/types.js';
import { ExpertFailed, ScriptedExpert, type Script } from '../shared/scripted-expert.js';
import { describeOptions, productById } from './catalog.js';
import { describePaymentMethod, money, type Order, type User } from './database.js';
import { goldAction, type PursuedGoal, type RetailGoal } from './goals.js';
import { getRetailTask, type RetailTask } from './tasks.js';
import { TRANSFER_TOOL } from './tools.js';
import { formatAddress } from './user-script.js';

/**
 * The expert of `gymflow/conversation-v0`: a careful agent that follows the policy. It knows the task's
 * goals (from the task bank, as the household planner knows the house), but acts only on what the
 * conversation and the tools have shown: it asks for the customer's email and authenticates with what they
 * say (their name and zip code when they do not remember the email), reads their details, asks which order
 * and looks the order up (searching their orders for the product they describe when they forget the id),
 * asks for each fact the change needs (the reason, the new address, the items, the payment method), reads
 * the products it exchanges, describes the exact change and asks for a yes, makes the change, and reports
 * it. It declines another customer's order, answers questions from what it read, and transfers to a human
 * when only a human can help. When the customer changes their mind at the confirmation, it follows them.
 * Its demonstrations therefore show the conversation an agent has to learn.
 */

const say = (content: string): Action => ({ tool: 'respond', params: { content } });
const ANYTHING_ELSE = 'Is there anything else I can help you with?';

function parse<T>(observation: string, what: string): T {
  try {
    return JSON.parse(observation) as T;
  } catch {
    throw new ExpertFailed(`retail expert: expected ${what} as JSON, got: ${observation.slice(0, 200)}`);
  }
}

function* solve(task: RetailTask): Script {
  const u = task.db.users[task.userId] as User;
  const located = new Set<string>();

  yield say("Hello! I'd be happy to help. First, I need to verify your identity: could you please tell me your email?");
  const found = task.knowsEmail
    ? yield { tool: 'find_user_id_by_email', params: { email: u.email } }
    : yield { tool: 'find_user_id_by_name_zip', params: { first_name: u.name.first_name, last_name: u.name.last_name, zip: u.address.zip } };
  if (found !== u.user_id) throw new ExpertFailed(`retail expert: authentication found '${found}', not ${u.user_id}`);
  yield { tool: 'get_user_details', params: { user_id: u.user_id } };

  /** Asks which order; when the customer forgets the id, reads their orders until one has the product they named. */
  function* locate(p: PursuedGoal, orderId: string): Generator<Action, Order, string> {
    if (!located.has(orderId)) {
      yield say('Which order is it? Please tell me the order ID.');
      if (!p.knowsOrderId && p.orderHint !== undefined) {
        for (const id of u.orders) {
          if (id === orderId) break;
          const other = parse<Order>(yield { tool: 'get_order_details', params: { order_id: id } }, 'an order');
          if (other.items.some((i) => i.name === p.orderHint)) throw new ExpertFailed(`retail expert: ${id} also has a ${p.orderHint}`);
        }
      }
      located.add(orderId);
    }
    return parse<Order>(yield { tool: 'get_order_details', params: { order_id: orderId } }, 'an order');
  }

  function* pursue(goal: RetailGoal, p: PursuedGoal, changesMind: boolean): Script {
    switch (goal.kind) {
      case 'foreign':
        yield say(`I'm sorry, but I can only help with your own account, so I can't look up or discuss another customer's order. ${ANYTHING_ELSE}`);
        return;
      case 'transfer':
        yield* locate(p, goal.orderId);
        yield { tool: TRANSFER_TOOL, params: { summary: `The customer's ${goal.productName} from order ${goal.orderId} arrived damaged; they want compensation without a return.` } };
        return;
      case 'info': {
        if (goal.question === 'gift_balance') {
          const fresh = parse<User>(yield { tool: 'get_user_details', params: { user_id: u.user_id } }, 'the user');
          const gift = Object.values(fresh.payment_methods).find((m) => m.source === 'gift_card');
          if (gift?.source !== 'gift_card') throw new ExpertFailed('retail expert: the customer has no gift card');
          yield say(`Your gift card (${gift.id}) has a balance of $${money(gift.balance)}. ${ANYTHING_ELSE}`);
          return;
        }
        const order = yield* locate(p, goal.orderId ?? '');
        if (goal.question === 'tracking') {
          const tracking = order.fulfillments[0]?.tracking_id[0] ?? 'not yet available';
          yield say(`The tracking number of order ${order.order_id} is ${tracking}. ${ANYTHING_ELSE}`);
        } else {
          yield say(`You paid $${money(order.payment_history[0]?.amount ?? 0)} for order ${order.order_id}. ${ANYTHING_ELSE}`);
        }
        return;
      }
      default:
        break;
    }
    const pm = (id: string): string => `${id} (your ${describePaymentMethod(u.payment_methods[id] as User['payment_methods'][string])})`;
    let confirm: string;
    let report: string;
    if (goal.kind === 'user_address') {
      yield say('What is your new address?');
      confirm = `To confirm: I will change the default address of your account to ${formatAddress(goal.address)}.`;
      report = `Done: your account's address is now ${formatAddress(goal.address)}.`;
    } else {
      const order = yield* locate(p, goal.orderId);
      const oid = order.order_id;
      switch (goal.kind) {
        case 'cancel':
          yield say('What is the reason for the cancellation: no longer needed, or ordered by mistake?');
          confirm = `To confirm: I will cancel order ${oid} with the reason '${goal.reason}'. The payment will be refunded to the original payment method.`;
          report = `Done: order ${oid} is cancelled, and the refund goes to the original payment method.`;
          break;
        case 'modify_address':
          yield say('What is the new shipping address?');
          confirm = `To confirm: I will change the shipping address of order ${oid} to ${formatAddress(goal.address)}.`;
          report = `Done: order ${oid} will ship to ${formatAddress(goal.address)}.`;
          break;
        case 'modify_payment':
          yield say('Which of your payment methods would you like to pay with instead?');
          confirm = `To confirm: I will pay order ${oid} with ${pm(goal.paymentMethodId)} instead, and refund the original payment.`;
          report = `Done: order ${oid} is now paid with ${pm(goal.paymentMethodId)}.`;
          break;
        case 'return':
          yield say('Which items would you like to return?');
          yield say('Would you like the refund to go to the original payment method or to a gift card?');
          confirm = `To confirm: I will request a return of ${goal.itemIds.map((id) => `the ${order.items.find((i) => i.item_id === id)?.name ?? id} (item ${id})`).join(' and ')} from order ${oid}, refunded to ${pm(goal.paymentMethodId)}.`;
          report = `Done: the return for order ${oid} is requested; you will receive an email with instructions, and the refund goes to ${pm(goal.paymentMethodId)}.`;
          break;
        case 'modify_items':
        case 'exchange': {
          const verb = goal.kind === 'exchange' ? 'exchange' : 'change';
          yield say(`Which items would you like to ${verb}, and to which options?`);
          const products = [...new Set(goal.changes.map((c) => order.items.find((i) => i.item_id === c.itemId)?.product_id ?? ''))];
          for (const id of products) yield { tool: 'get_product_details', params: { product_id: id } };
          yield say('Which payment method would you like to use for any price difference?');
          let diff = 0;
          const lines = goal.changes.map((c) => {
            const old = order.items.find((i) => i.item_id === c.itemId);
            const next = old ? productById(old.product_id)?.variants[c.newItemId] : undefined;
            if (!old || !next) throw new ExpertFailed(`retail expert: no item ${c.itemId} → ${c.newItemId} in ${oid}`);
            diff += next.price - old.price;
            return `the ${old.name} (item ${old.item_id}, ${describeOptions(old.options)}) to item ${next.item_id} (${describeOptions(next.options)})`;
          });
          const balance = diff >= 0 ? `you pay the difference of $${money(diff)} with` : `the difference of $${money(-diff)} is refunded to`;
          confirm = `To confirm: in order ${oid} I will ${verb} ${lines.join(' and ')}; ${balance} ${pm(goal.paymentMethodId)}. This can be done only once for this order.`;
          report = goal.kind === 'exchange' ? `Done: the exchange for order ${oid} is requested; you will receive an email with instructions.` : `Done: the items of order ${oid} are changed.`;
          break;
        }
      }
    }
    // The customer's yes (or, when they change their mind, their new request) answers this.
    yield say(`${confirm} Would you like me to proceed? Please answer yes or no.`);
    if (changesMind) return;
    const action = goldAction(goal, u.user_id) as Action;
    const result = yield action;
    if (result.startsWith('Error') || result.startsWith('Refused')) throw new ExpertFailed(`retail expert: ${action.tool} failed: ${result}`);
    yield say(`${report} ${ANYTHING_ELSE}`);
  }

  for (const p of task.goals) {
    if (p.initially) yield* pursue(p.initially, p, true);
    yield* pursue(p.goal, p, false);
  }
}

/** The expert agent for `gymflow/conversation-v0` (see the module comment). */
export class RetailExpert extends ScriptedExpert {
  constructor() {
    // An unknown task id, or a plan that fails, makes the agent transfer, giving up.
    super({ name: 'conversation-expert' }, { tool: TRANSFER_TOOL, params: { summary: 'I could not resolve the request.' } });
  }

  /** The plan for the task. */
  protected start(task: TaskInfo): Script {
    return solve(getRetailTask(task.id));
  }
}
