import type { Rng } from '../../core/rng.js';
import { DEFAULT_PHRASES, type ScriptFact, type ScriptGoal, type UserScript } from '../conversation-kit/scripted-user.js';
import { describeOptions, productById } from './catalog.js';
import { type Address, describePaymentMethod, type Order, paymentMethodCue, type RetailDb, type User } from './database.js';
import type { ItemChange, PursuedGoal, RetailGoal } from './goals.js';

/**
 * A retail customer in words: the scripted user's {@link UserScript} (facts it tells when asked, its goals
 * with what a confirmation must mention), the opening message, and the hidden instruction a model user is
 * prompted with. Both users get the same facts: who the customer is, which order, why, where to, which
 * items and payment method.
 */

/** What an agent's message must contain for the user to hear it as asking for a fact. */
export const ASKED = {
  email: /e-?mail/i,
  nameZip: /\b(name|zip|postal)\b/i,
  userId: /\buser ?id\b/i,
  order: /\border\s+(id|number)|\bwhich order|\bwhat order|\border'?s id/i,
  reason: /\b(reason|why)\b/i,
  // "email address" asks for the email.
  address: /(?<!e-?mail )\baddress\b/i,
  payment: /\b(payment|pay|card|paypal|refund|refunded)\b/i,
  items: /\b(items?|products?|which one|variants?|options?)\b/i,
} as const;

/** How the agent can show it declines a request (another customer's order). */
export const DECLINES = /\b(can'?t|cannot|can not|unable|not able|only (help|assist|access|discuss|act)|not allowed|not permitted|sorry)\b/i;

/** An address in one line: `12 Oak Street, Suite 100, Austin, TX 78701, USA`. */
export function formatAddress(a: Address): string {
  return `${a.address1}, ${a.address2}, ${a.city}, ${a.state} ${a.zip}, ${a.country}`;
}

const line = (order: Order, itemId: string): Order['items'][number] => order.items.find((i) => i.item_id === itemId) as Order['items'][number];

/** The options a change alters, with their new values. */
export function changedOptions(order: Order, c: ItemChange): Record<string, string> {
  const old = line(order, c.itemId);
  const next = productById(old.product_id)?.variants[c.newItemId]?.options ?? {};
  return Object.fromEntries(Object.entries(next).filter(([k, v]) => old.options[k] !== v));
}

function changesText(order: Order, changes: readonly ItemChange[]): string {
  return changes.map((c) => {
    const old = line(order, c.itemId);
    return `the ${old.name} (${describeOptions(old.options)}) to the one with ${describeOptions(changedOptions(order, c))}`;
  }).join(' and ');
}

function itemsText(order: Order, itemIds: readonly string[]): string {
  return itemIds.map((id) => {
    const l = line(order, id);
    return `the ${l.name} (${describeOptions(l.options)})`;
  }).join(' and ');
}

const REQUESTS: Record<Exclude<RetailGoal['kind'], 'info' | 'transfer' | 'foreign'>, readonly string[]> = {
  cancel: ["I'd like to cancel an order.", 'I need to cancel one of my orders.'],
  modify_address: ['I need to change the shipping address of one of my orders.', 'Can I change where one of my orders is being shipped?'],
  modify_payment: ['I want to change the payment method of one of my orders.', 'Can I pay for one of my orders with a different payment method?'],
  modify_items: ["I'd like to change an item in an order that hasn't shipped yet.", 'I ordered the wrong variant of something and want to change it before it ships.'],
  return: ['I want to return something I received.', "I'd like to return an item from one of my orders."],
  exchange: ["I'd like to exchange an item I received for a different variant.", 'I want to exchange something from a delivered order.'],
  user_address: ['I moved and need to update the default address on my account.', "I'd like to change the address on my account; I've moved."],
};

/** What the user says instead, when it changes its mind to this goal. */
const INSTEAD: Partial<Record<RetailGoal['kind'], string>> = {
  cancel: "I'd rather just cancel that order.",
  modify_address: "I'd rather just change that order's shipping address.",
  modify_payment: "I'd rather just pay for that order with a different payment method.",
  modify_items: "I'd rather change an item of that order to a different variant.",
  return: "I'd rather return it instead.",
  exchange: "I'd rather exchange it for a different variant instead.",
};

/** How the user states a goal. */
function requests(goal: RetailGoal): readonly string[] {
  switch (goal.kind) {
    case 'info':
      return goal.question === 'tracking'
        ? ["What's the tracking number of one of my orders?", 'Can you give me the tracking number of one of my orders?']
        : goal.question === 'total'
          ? ['How much did I pay for one of my orders?', 'Can you tell me the total I paid for one of my orders?']
          : ["What's the balance of my gift card?", 'How much is left on my gift card?'];
    case 'transfer': {
      const product = goal.productName;
      return [`My ${product} arrived damaged. I don't want to return it, I want compensation. Please let me talk to a human.`];
    }
    case 'foreign': {
      const who = goal.friend;
      return [`Also, my friend ${who} asked me to check the status of their order ${goal.orderId}. Can you tell me?`];
    }
    default:
      return REQUESTS[goal.kind];
  }
}

/** The user's first message: a greeting and its first goal. */
export function openingMessage(first: PursuedGoal, rng: Rng): string {
  return `Hi! ${rng.pick(requests(first.initially ?? first.goal))}`;
}

function orderRef(p: PursuedGoal, orderId: string): string {
  return p.knowsOrderId || p.orderHint === undefined ? `order ${orderId}` : `the order with the ${p.orderHint}`;
}

function orderFact(p: PursuedGoal, orderId: string): ScriptFact {
  const answers = p.knowsOrderId || p.orderHint === undefined
    ? [`It's order ${orderId}.`, `The order ID is ${orderId}.`]
    : [`I don't remember the order ID, but it's the order with the ${p.orderHint}.`];
  return { key: 'order', asked: ASKED.order, answers };
}

const REASON_ANSWERS = {
  'no longer needed': ["I don't need it anymore, so: no longer needed.", "The reason is that it's no longer needed."],
  'ordered by mistake': ['I ordered it by mistake.', 'It was ordered by mistake.'],
} as const;

/** The facts, the confirmation check and the correction of one goal. */
function goalScript(db: RetailDb, u: User, p: PursuedGoal, goal: RetailGoal): ScriptGoal {
  const base = { id: goal.kind, request: requests(goal) };
  const pmText = (id: string): string => describePaymentMethod(u.payment_methods[id] as User['payment_methods'][string]);
  const pmGroup = (id: string, original = false): string[] => [id, paymentMethodCue(u.payment_methods[id] as User['payment_methods'][string]), ...(original ? ['original payment method'] : [])];
  switch (goal.kind) {
    case 'info':
      return { ...base, kind: 'inform', outputs: [], facts: goal.orderId !== undefined ? [orderFact(p, goal.orderId)] : [] };
    case 'transfer':
      return { ...base, kind: 'handoff', facts: [orderFact(p, goal.orderId)] };
    case 'foreign':
      return { ...base, kind: 'refuse', accept: DECLINES, acknowledge: ['Oh, I see. That makes sense.', 'OK, I understand.'] };
    case 'user_address': {
      const text = formatAddress(goal.address);
      return {
        ...base,
        kind: 'action',
        facts: [{ key: 'address', asked: ASKED.address, answers: [`My new address is ${text}.`, `It's ${text}.`] }],
        confirm: [[goal.address.address1], [goal.address.zip]],
        correction: [`No, that's not right. My new address is ${text}.`],
      };
    }
    default:
      break;
  }
  const order = db.orders[goal.orderId] as Order;
  const ref = orderRef(p, goal.orderId);
  const facts: ScriptFact[] = [orderFact(p, goal.orderId)];
  const oid = [goal.orderId];
  switch (goal.kind) {
    case 'cancel':
      facts.push({ key: 'reason', asked: ASKED.reason, answers: REASON_ANSWERS[goal.reason] });
      return { ...base, kind: 'action', facts, confirm: [oid, [goal.reason]], correction: [`No, that's not right. I want to cancel ${ref} because it's ${goal.reason}.`] };
    case 'modify_address': {
      const text = formatAddress(goal.address);
      facts.push({ key: 'address', asked: ASKED.address, answers: [`The new address is ${text}.`, `Please ship it to ${text}.`] });
      return { ...base, kind: 'action', facts, confirm: [oid, [goal.address.address1], [goal.address.zip]], correction: [`No, that's not right. I want ${ref} shipped to ${text}.`] };
    }
    case 'modify_payment':
      facts.push({ key: 'payment', asked: ASKED.payment, answers: [`I'd like to pay with my ${pmText(goal.paymentMethodId)} instead.`] });
      return { ...base, kind: 'action', facts, confirm: [oid, pmGroup(goal.paymentMethodId)], correction: [`No, that's not right. I want to pay for ${ref} with my ${pmText(goal.paymentMethodId)}.`] };
    case 'modify_items':
    case 'exchange': {
      const what = changesText(order, goal.changes);
      const verb = goal.kind === 'exchange' ? 'exchange' : 'change';
      facts.push(
        { key: 'items', asked: ASKED.items, answers: [`I'd like to ${verb} ${what}.`] },
        { key: 'payment', asked: ASKED.payment, answers: [`Please use my ${pmText(goal.paymentMethodId)} for any price difference.`] },
      );
      return {
        ...base,
        kind: 'action',
        facts,
        confirm: [oid, ...goal.changes.map((c) => [c.newItemId, ...Object.values(changedOptions(order, c))]), pmGroup(goal.paymentMethodId)],
        correction: [`No, that's not right. In ${ref}, I want to ${verb} ${what}, paying any difference with my ${pmText(goal.paymentMethodId)}.`],
      };
    }
    case 'return': {
      const what = itemsText(order, goal.itemIds);
      const original = order.payment_history[0]?.payment_method_id === goal.paymentMethodId;
      const where = original ? 'the original payment method' : 'my gift card';
      facts.push(
        { key: 'items', asked: ASKED.items, answers: [`I want to return ${what}.`] },
        { key: 'payment', asked: ASKED.payment, answers: original ? ['Please refund it to the original payment method.'] : ['Please put the refund on my gift card.'] },
      );
      return {
        ...base,
        kind: 'action',
        facts,
        confirm: [oid, ...goal.itemIds.map((id) => [id, line(order, id).name]), pmGroup(goal.paymentMethodId, original)],
        correction: [`No, that's not right. From ${ref}, I want to return ${what}, refunded to ${where}.`],
      };
    }
  }
}

/** The scripted user of a task (its facts, and its goals in order). */
export function buildUserScript(db: RetailDb, u: User, goals: readonly PursuedGoal[], knowsEmail: boolean, outputs: readonly (readonly string[])[]): UserScript {
  const { first_name: first, last_name: last } = u.name;
  const zip = u.address.zip;
  const facts: ScriptFact[] = [
    knowsEmail
      ? { key: 'email', asked: ASKED.email, answers: [`My email is ${u.email}.`, `Sure, it's ${u.email}.`] }
      : { key: 'email', asked: ASKED.email, answers: [`I don't remember my email address. My name is ${first} ${last} and my zip code is ${zip}.`] },
    { key: 'name_zip', asked: ASKED.nameZip, answers: [`My name is ${first} ${last} and my zip code is ${zip}.`, `I'm ${first} ${last}, and my zip code is ${zip}.`] },
    { key: 'user_id', asked: ASKED.userId, answers: ["I don't know my user id."] },
  ];
  const scripted = goals.map((p, i): ScriptGoal => {
    const goal = goalScript(db, u, p, p.goal);
    const withOutputs = goal.kind === 'inform' ? { ...goal, outputs: outputs[i] ?? [] } : goal;
    if (!p.initially || withOutputs.kind !== 'action') return withOutputs;
    const first = goalScript(db, u, p, p.initially);
    if (first.kind !== 'action') return withOutputs;
    const instead = INSTEAD[p.goal.kind] ?? '';
    return { ...first, changeMind: { say: [`Actually, wait. I've changed my mind. ${instead}`, `Hmm, actually, no. ${instead}`], to: withOutputs } };
  });
  return { facts, goals: scripted, patience: 4, phrases: DEFAULT_PHRASES };
}

/** One goal in the hidden instruction's words. */
function goalSentence(db: RetailDb, u: User, p: PursuedGoal, goal: RetailGoal): string {
  const pmText = (id: string): string => describePaymentMethod(u.payment_methods[id] as User['payment_methods'][string]);
  const ref = (orderId: string): string =>
    p.knowsOrderId || p.orderHint === undefined ? `your order ${orderId}` : `one of your orders (you do not remember its id; it is the one with the ${p.orderHint})`;
  switch (goal.kind) {
    case 'cancel':
      return `you want to cancel ${ref(goal.orderId)} because it is ${goal.reason}.`;
    case 'modify_address':
      return `you want the shipping address of ${ref(goal.orderId)} changed to ${formatAddress(goal.address)}.`;
    case 'modify_payment':
      return `you want to pay for ${ref(goal.orderId)} with your ${pmText(goal.paymentMethodId)} instead.`;
    case 'modify_items':
      return `${ref(goal.orderId)} has not shipped yet, and you want to change ${changesText(db.orders[goal.orderId] as Order, goal.changes)}, paying any price difference with your ${pmText(goal.paymentMethodId)}.`;
    case 'exchange':
      return `from ${ref(goal.orderId)}, which was delivered, you want to exchange ${changesText(db.orders[goal.orderId] as Order, goal.changes)}, paying any price difference with your ${pmText(goal.paymentMethodId)}.`;
    case 'return': {
      const order = db.orders[goal.orderId] as Order;
      const original = order.payment_history[0]?.payment_method_id === goal.paymentMethodId;
      return `you want to return ${itemsText(order, goal.itemIds)} from ${ref(goal.orderId)}, refunded to ${original ? 'the original payment method' : 'your gift card'}.`;
    }
    case 'user_address':
      return `you have moved, and you want the default address of your account changed to ${formatAddress(goal.address)}.`;
    case 'info':
      return goal.question === 'tracking'
        ? `you want to know the tracking number of ${ref(goal.orderId ?? '')}.`
        : goal.question === 'total'
          ? `you want to know how much you paid for ${ref(goal.orderId ?? '')}.`
          : 'you want to know the balance of your gift card.';
    case 'transfer':
      return `your ${goal.productName} from ${ref(goal.orderId)} arrived damaged; you do not want to return it, you want compensation, and you insist on talking to a human agent.`;
    case 'foreign':
      return `you ask the status of your friend ${goal.friend}'s order ${goal.orderId}, which is not yours; if the agent declines, you accept that.`;
  }
}

/** The hidden instruction: the customer and its goals in words, for a model user. */
export function hiddenInstruction(db: RetailDb, u: User, goals: readonly PursuedGoal[], knowsEmail: boolean): string {
  const { first_name: first, last_name: last } = u.name;
  const who = `You are ${first} ${last}, and your zip code is ${u.address.zip}. ${knowsEmail ? `Your email is ${u.email}.` : 'You do not remember your email address.'}`;
  const parts = goals.map((p, i) => {
    const lead = goals.length === 1 ? 'You contact the store because' : i === 0 ? 'First,' : 'After that,';
    const final = goalSentence(db, u, p, p.goal);
    if (!p.initially) return `${lead} ${final}`;
    return `${lead} you first ask for this: ${goalSentence(db, u, p, p.initially)} But when the agent asks you to confirm it, you change your mind: ${final}`;
  });
  return [who, ...parts, 'Confirm an action only when the agent describes exactly what you want. When everything you want is done, end the conversation.'].join(' ');
}
