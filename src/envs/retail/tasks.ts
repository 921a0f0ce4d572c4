import { Rng } from '../../core/rng.js';
import type { Action, Split, TaskInfo } from '../../core/types.js';
import type { UserScript } from '../conversation-kit/scripted-user.js';
import { runRetailTool } from './actions.js';
import { productById } from './catalog.js';
import { cloneDb, generateDatabase, type NamePool, type Order, randomAddress, type RetailDb, sameDb, type User } from './database.js';
import { type CancelReason, goalOrder, goalOutputs, goldAction, type ItemChange, type PursuedGoal, type RetailGoal, type RetailGoalKind } from './goals.js';
import { RETAIL_POLICY } from './policy.js';
import { TRANSFER_TOOL } from './tools.js';
import { buildUserScript, hiddenInstruction, openingMessage } from './user-script.js';
import { indexedTaskBank } from '../shared/task-bank.js';

/**
 * The task bank of `gymflow/conversation-v0`. Task `i` of a split is regenerated from its id alone
 * (`retail-train-00042`): its store (users, orders) comes from a seed of the split's own stream, its kind
 * is the `i mod 9`-th of {@link RETAIL_TASK_KINDS}, and the seed also draws the customer, the goal and the
 * variations — whether the customer remembers their email and the order id, whether they change their mind
 * at the first confirmation, and a second request (information, or another customer's order, which the
 * agent must decline).
 *
 * The splits draw their customers' first names from disjoint lists, so no held-out customer, hence no
 * held-out hidden instruction, occurs in training.
 *
 * A task's gold actions are its goals' tool calls; its gold state is the initial database after them (and
 * whether the conversation was transferred); its required outputs are what its information goals ask.
 */

/** The domain profile these tasks belong to. */
export const CONVERSATION_DOMAIN = 'conversation';

/** The kinds of tasks (their main goal), in the order task indices cycle through. */
export const RETAIL_TASK_KINDS = ['cancel', 'modify_address', 'modify_payment', 'modify_items', 'return', 'exchange', 'info', 'user_address', 'transfer'] as const;

/** A kind of task. */
export type RetailTaskKind = (typeof RETAIL_TASK_KINDS)[number];

/** Tasks per split (50 and 10 of each kind). */
export const RETAIL_TASK_COUNTS: Readonly<Record<Split, number>> = { train: 450, heldout: 90 };

/** A task of the bank. */
export interface RetailTask {
  id: string;
  split: Split;
  /** The seed its store and goals were drawn from. */
  seed: number;
  kind: RetailTaskKind;
  /** The store at the start. */
  db: RetailDb;
  /** The customer. */
  userId: string;
  /** The customer can say their email (else they give their name and zip code). */
  knowsEmail: boolean;
  /** What the customer wants, in order. */
  goals: PursuedGoal[];
  /** The calls that achieve the goals, in order. */
  gold: Action[];
  /** The store after the gold calls. */
  goldDb: RetailDb;
  /** Whether the gold calls end with a transfer to a human. */
  goldTransferred: boolean;
  /** What the agent must tell the customer. */
  outputs: string[];
  /** The customer's first message. */
  opening: string;
  /** The hidden instruction: who the customer is and what they want, in words (a model user's prompt). */
  hidden: string;
  /** The same, as the scripted user follows it. */
  script: UserScript;
  /** What the agent is told: the policy and the customer's first message. */
  instruction: string;
}

/** The first names of each split's customers (disjoint), and the last names they share. */
export const NAME_POOLS: Readonly<Record<Split, NamePool>> = {
  train: {
    first: [
      'Aisha', 'Amelia', 'Andre', 'Anya', 'Arjun', 'Beatriz', 'Caleb', 'Chen', 'Daniel', 'Dmitri', 'Elena', 'Emeka', 'Farah', 'Felix', 'Grace', 'Hana',
      'Hugo', 'Ines', 'Isaac', 'Jonas', 'Julia', 'Kenji', 'Laila', 'Leo', 'Lucia', 'Malik', 'Maya', 'Mateo', 'Nadia', 'Noah', 'Olga', 'Omar',
      'Priya', 'Rafael', 'Rosa', 'Samir', 'Sofia', 'Tariq', 'Yara', 'Zoe',
    ],
    last: ['Garcia', 'Nguyen', 'Patel', 'Kim', 'Okafor', 'Silva', 'Novak', 'Cohen', 'Rossi', 'Tanaka', 'Muller', 'Haddad', 'Lopez', 'Ivanova', 'Johnson', 'Ahmed', 'Moreau', 'Santos', 'Larsen', 'Chen'],
  },
  heldout: {
    first: ['Abigail', 'Bruno', 'Clara', 'Dario', 'Esther', 'Gideon', 'Helga', 'Imani', 'Joaquin', 'Kaia', 'Lorenzo', 'Mirela', 'Nikolai', 'Odessa', 'Pavel', 'Quinn', 'Ruth', 'Stellan', 'Thea', 'Ulrich'],
    last: ['Garcia', 'Nguyen', 'Patel', 'Kim', 'Okafor', 'Silva', 'Novak', 'Cohen', 'Rossi', 'Tanaka', 'Muller', 'Haddad', 'Lopez', 'Ivanova', 'Johnson', 'Ahmed', 'Moreau', 'Santos', 'Larsen', 'Chen'],
  },
};

// Disjoint seed streams: the split decides the high bits.
const STREAM_BASE: Readonly<Record<Split, number>> = { train: 0x21000000, heldout: 0x2a000000 };
/** Seeds tried per task before giving up (a store may lack what a kind needs). */
const ATTEMPTS = 64;

/** The id of the `index`-th task of `split`. */
export function retailTaskId(split: Split, index: number): string {
  return bank.id(split, index);
}

const ordersOf = (db: RetailDb, u: User, status?: Order['status']): Order[] => u.orders.map((id) => db.orders[id] as Order).filter((o) => status === undefined || o.status === status);

/** The changes of 1–2 lines of `order` to other available variants, preferring ones that differ in one option. */
function drawChanges(order: Order, rng: Rng): ItemChange[] | undefined {
  const candidates = order.items.flatMap((line) => {
    const product = productById(line.product_id);
    if (!product) return [];
    const others = Object.values(product.variants).filter((v) => v.available && v.item_id !== line.item_id);
    const close = others.filter((v) => Object.keys(v.options).filter((k) => v.options[k] !== line.options[k]).length === 1);
    const pool = close.length > 0 ? close : others;
    return pool.length > 0 ? [{ itemId: line.item_id, newItemId: rng.pick(pool).item_id }] : [];
  });
  if (candidates.length === 0) return undefined;
  return rng.shuffle(candidates).slice(0, candidates.length > 1 && rng.next() < 0.3 ? 2 : 1);
}

/** The price difference of `changes` in `order`. */
function difference(order: Order, changes: readonly ItemChange[]): number {
  let diff = 0;
  for (const c of changes) {
    const line = order.items.find((i) => i.item_id === c.itemId);
    const v = line ? productById(line.product_id)?.variants[c.newItemId] : undefined;
    if (line && v) diff += v.price - line.price;
  }
  return diff;
}

/** A payment method of `u` that can pay `amount` (a gift card must cover it), other than `not`. */
function payer(u: User, amount: number, rng: Rng, not?: string): string | undefined {
  const ok = Object.values(u.payment_methods).filter((m) => m.id !== not && (m.source !== 'gift_card' || m.balance >= amount));
  return ok.length === 0 ? undefined : rng.pick(ok).id;
}

/** A goal of `kind` on `order` (or on the user, for the kinds without an order), or undefined when impossible. */
function goalOn(kind: RetailGoalKind, db: RetailDb, u: User, order: Order | undefined, rng: Rng): RetailGoal | undefined {
  switch (kind) {
    case 'cancel':
      return order?.status === 'pending' ? { kind, orderId: order.order_id, reason: rng.pick<CancelReason>(['no longer needed', 'ordered by mistake']) } : undefined;
    case 'modify_address': {
      if (order?.status !== 'pending') return undefined;
      const address = randomAddress(rng);
      return address.zip === order.address.zip ? undefined : { kind, orderId: order.order_id, address };
    }
    case 'modify_payment': {
      if (order?.status !== 'pending' || order.payment_history.length !== 1) return undefined;
      const pm = payer(u, order.payment_history[0]?.amount ?? 0, rng, order.payment_history[0]?.payment_method_id);
      return pm === undefined ? undefined : { kind, orderId: order.order_id, paymentMethodId: pm };
    }
    case 'modify_items':
    case 'exchange': {
      if (order?.status !== (kind === 'exchange' ? 'delivered' : 'pending')) return undefined;
      const changes = drawChanges(order, rng);
      if (!changes) return undefined;
      const pm = payer(u, Math.max(0, difference(order, changes)), rng);
      return pm === undefined ? undefined : { kind, orderId: order.order_id, changes, paymentMethodId: pm };
    }
    case 'return': {
      if (order?.status !== 'delivered') return undefined;
      const ids = [...new Set(order.items.map((i) => i.item_id))];
      const itemIds = rng.shuffle(ids).slice(0, ids.length > 1 && rng.next() < 0.3 ? 2 : 1).sort();
      const original = order.payment_history[0]?.payment_method_id as string;
      const gift = Object.values(u.payment_methods).find((m) => m.source === 'gift_card' && m.id !== original);
      return { kind, orderId: order.order_id, itemIds, paymentMethodId: gift && rng.next() < 0.3 ? gift.id : original };
    }
    case 'user_address':
      return { kind, address: randomAddress(rng) };
    case 'info': {
      const questions = [
        ...(order && order.fulfillments.length > 0 ? (['tracking'] as const) : []),
        ...(order ? (['total'] as const) : []),
        ...(Object.values(u.payment_methods).some((m) => m.source === 'gift_card') ? (['gift_balance'] as const) : []),
      ];
      if (questions.length === 0) return undefined;
      const question = rng.pick(questions);
      return question === 'gift_balance' ? { kind, question } : { kind, question, orderId: (order as Order).order_id };
    }
    case 'transfer':
      return order?.status === 'delivered' ? { kind, orderId: order.order_id, productName: (order.items[0] as Order['items'][number]).name } : undefined;
    default:
      return undefined;
  }
}

/** A product in `order` that no other order of `u` has (how the user can describe the order), if any. */
function hintFor(db: RetailDb, u: User, order: Order): string | undefined {
  const elsewhere = new Set(ordersOf(db, u).filter((o) => o.order_id !== order.order_id).flatMap((o) => o.items.map((i) => i.name)));
  return order.items.map((i) => i.name).find((n) => !elsewhere.has(n));
}

/** The other kinds a user may ask for first on the same order, then change their mind from. */
const MIND_CHANGES: Partial<Record<RetailTaskKind, readonly RetailGoalKind[]>> = {
  cancel: ['modify_address', 'modify_payment'],
  modify_address: ['cancel'],
  modify_payment: ['cancel', 'modify_address'],
  modify_items: ['cancel'],
  return: ['exchange'],
  exchange: ['return'],
};

function generateTask(split: Split, index: number): RetailTask {
  const kind = RETAIL_TASK_KINDS[index % RETAIL_TASK_KINDS.length] as RetailTaskKind;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const seed = STREAM_BASE[split] + index * ATTEMPTS + attempt;
    const task = draw(split, index, kind, seed);
    if (task) return task;
  }
  throw new RangeError(`retail: no store of ${split} task ${index} hosts a ${kind} task after ${ATTEMPTS} seeds`);
}

function draw(split: Split, index: number, kind: RetailTaskKind, seed: number): RetailTask | undefined {
  const rng = new Rng(seed);
  const db = generateDatabase(rng, NAME_POOLS[split]);
  const users = Object.values(db.users);
  const u = rng.pick(users);
  const orders = rng.shuffle(ordersOf(db, u));
  let main: PursuedGoal | undefined;
  for (const order of kind === 'user_address' ? [undefined] : orders) {
    const goal = goalOn(kind, db, u, order, rng);
    if (!goal) continue;
    const hint = order ? hintFor(db, u, order) : undefined;
    // The user forgets the order id only when a product singles the order out (never for a transfer: it names the product anyway).
    const knowsOrderId = order === undefined || hint === undefined || kind === 'transfer' || rng.next() < 0.7;
    main = { goal, knowsOrderId, ...(hint !== undefined && !knowsOrderId ? { orderHint: hint } : {}) };
    const alternatives = MIND_CHANGES[kind];
    if (order && alternatives && rng.next() < 0.25) {
      const initially = goalOn(rng.pick(alternatives), db, u, order, rng);
      if (initially) main.initially = initially;
    }
    break;
  }
  if (!main) return undefined;
  const goals: PursuedGoal[] = [main];
  // A second request: information about another order or the gift card, or another customer's order.
  if (kind !== 'transfer' && rng.next() < 0.35) {
    const mainOrder = goalOrder(main.goal);
    if (rng.next() < 0.5) {
      const other = rng.pick(users.filter((x) => x.user_id !== u.user_id));
      const friend = `${other.name.first_name} ${other.name.last_name}`;
      goals.push({ goal: { kind: 'foreign', orderId: rng.pick(other.orders), friend }, knowsOrderId: true });
    } else {
      const candidates = ordersOf(db, u).filter((o) => o.order_id !== mainOrder);
      const info = goalOn('info', db, u, candidates.length > 0 ? rng.pick(candidates) : undefined, rng);
      if (info) goals.push({ goal: info, knowsOrderId: true });
    }
  }

  // Gold: replay the goals' calls; information is read from the store as it is when asked.
  const gold: Action[] = [];
  const outputs: string[][] = [];
  const goldDb = cloneDb(db);
  let goldTransferred = false;
  for (const g of goals) {
    outputs.push(goalOutputs(g.goal, goldDb, goldDb.users[u.user_id] as User));
    const action = goldAction(g.goal, u.user_id);
    if (!action) continue;
    gold.push(action);
    if (action.tool === TRANSFER_TOOL) {
      goldTransferred = true;
      continue;
    }
    try {
      runRetailTool(goldDb, action);
    } catch {
      return undefined;
    }
  }
  if (gold.length === 0 && outputs.flat().length === 0) return undefined;
  if (!goldTransferred && gold.length > 0 && sameDb(db, goldDb)) return undefined;

  const id = retailTaskId(split, index);
  const knowsEmail = rng.next() < 0.65;
  const script = buildUserScript(db, u, goals, knowsEmail, outputs);
  const opening = openingMessage(goals[0] as PursuedGoal, rng);
  const hidden = hiddenInstruction(db, u, goals, knowsEmail);
  return {
    id,
    split,
    seed,
    kind,
    db,
    userId: u.user_id,
    knowsEmail,
    goals,
    gold,
    goldDb,
    goldTransferred,
    outputs: outputs.flat(),
    opening,
    hidden,
    script,
    instruction: `${RETAIL_POLICY}\n\n# The customer's first message\n\n${opening}`,
  };
}

const bank = indexedTaskBank('retail', RETAIL_TASK_COUNTS, generateTask);

/** The task with this id. Throws a `TaskError` for an id that is malformed or out of range. */
export function getRetailTask(id: string): RetailTask {
  return bank.get(id);
}

/** Every task of a split (both splits when omitted), in index order; generated on first use. */
export function listRetailTasks(split?: Split): RetailTask[] {
  return bank.list(split);
}

/** The public description of a task: the policy and the first message, its kind; never the customer's goal details. */
export function retailTaskInfo(task: RetailTask): TaskInfo {
  return { id: task.id, domain: CONVERSATION_DOMAIN, instruction: task.instruction, split: task.split, metadata: { kind: task.kind, goals: task.goals.length } };
}
