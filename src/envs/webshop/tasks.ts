import { Rng } from '../../core/rng.js';
import type { Split, TaskInfo } from '../../core/types.js';
import { getCatalogue, listPhrases, PLURAL, type Product } from './catalogue.js';
import { indexedTaskBank } from '../shared/task-bank.js';

/**
 * The task bank of `gymflow/webshop-v0`: instructions of the kind WebShop's crowd workers wrote, each asking
 * for a product of one type with some of its attributes, one value of some of its option groups, and a price
 * limit, generated from a target product of the catalogue. Task `i` of a split is regenerated from its id
 * alone (`webshop-train-00042`): its target is the `i mod n`-th product of the split and its goal comes from
 * a seed of the split's own stream.
 *
 * Splits: every fifth product of each type (ranks 4, 9, …, 29) is held out — 300 products no training
 * instruction targets (WebShop's test goals are likewise drawn from products apart from its training goals) —
 * and no held-out goal is a training goal (same type, attributes, options and limit), however phrased: a
 * held-out task whose first draw is one redraws from the next seed of its stream.
 * Any product that meets a goal scores 1, as in WebShop: the target is where the goal came from, not the
 * only right answer.
 */

/** The domain profile these tasks belong to. */
export const WEBSHOP_DOMAIN = 'browser';

/** Tasks per split: two instructions for each of the 1,200 training products, one for each of the 300 held-out ones. */
export const WEBSHOP_TASK_COUNTS: Readonly<Record<Split, number>> = { train: 2400, heldout: 300 };

/** How many phrasings an instruction may take ({@link phrase}). */
export const PHRASING_COUNT = 5;

/** One option the goal asks for: a group and its value (`color: blonde`). */
export interface GoalOption {
  name: string;
  value: string;
}

/** What the buyer wants (WebShop's goal: type, attributes, options, price upper bound). */
export interface WebshopGoal {
  /** The department (`beauty`). */
  category: string;
  /** The product type (`hair extension`). */
  type: string;
  /** Attributes the product must have (1–3). */
  attributes: readonly string[];
  /** Options to select (1 per group the goal names). */
  options: readonly GoalOption[];
  /** The price limit in cents: the price must be at most this. */
  priceLimitCents: number;
}

/** A task of the bank. */
export interface WebshopTask {
  id: string;
  split: Split;
  /** The seed its goal was drawn from. */
  seed: number;
  /** The ASIN of the product the goal was drawn from (never shown to the agent). */
  target: string;
  goal: WebshopGoal;
  /** Which of the {@link PHRASING_COUNT} phrasings the instruction uses. */
  phrasing: number;
  /** What the agent is told. */
  instruction: string;
}

// Disjoint seed streams: the split decides the high bits.
const STREAM_BASE: Readonly<Record<Split, number>> = { train: 0x50000000, heldout: 0x70000000 };
/** Seeds a held-out task may try before giving up on a goal no training task has. */
const ATTEMPTS = 16;

/** Whether a product is held out: the fifth, tenth, … product of its type. */
export function isHeldOutProduct(product: Product): boolean {
  return product.rank % 5 === 4;
}

const splitProducts = new Map<Split, readonly Product[]>();

/**
 * The products a split's tasks target, interleaved across types (the first of every type, then the second,
 * …), so that any prefix of the split covers every department.
 */
export function targetProducts(split: Split): readonly Product[] {
  let list = splitProducts.get(split);
  if (!list) {
    list = getCatalogue()
      .products.filter((p) => isHeldOutProduct(p) === (split === 'heldout'))
      .sort((a, b) => a.rank - b.rank || a.index - b.index);
    splitProducts.set(split, list);
  }
  return list;
}

/** The id of the `index`-th task of `split`. */
export function webshopTaskId(split: Split, index: number): string {
  return bank.id(split, index);
}

/** `1234` → `1234` rounded up to a round limit: the next 5 dollars below 20, the next 10 above. */
function roundLimit(cents: number): number {
  const step = cents < 2000 ? 500 : 1000;
  return Math.ceil(cents / step) * step;
}

/** Draws a goal from a product: 1–3 of its attributes, a value of each of (most of) its option groups, a limit above its price. */
export function drawGoal(product: Product, rng: Rng): WebshopGoal {
  const count = rng.int(1, Math.min(3, product.attributes.length));
  const picked = new Set(rng.shuffle(product.attributes).slice(0, count));
  const attributes = product.attributes.filter((a) => picked.has(a));
  let groups = product.options.filter(() => rng.next() < 0.8);
  if (groups.length === 0 && product.options.length > 0) groups = [rng.pick(product.options)];
  const options = groups.map((g) => ({ name: g.name, value: rng.pick(g.values) }));
  const priceLimitCents = roundLimit(Math.round(product.priceCents * (1.1 + rng.next() * 0.5)));
  return { category: product.category, type: product.type, attributes, options, priceLimitCents };
}

/**
 * The goal in words, in WebShop's manner; `phrasing` picks one of {@link PHRASING_COUNT} forms:
 *
 * 0. `i need a hair extension which is natural looking and heat resistant, in blonde color and 20 inch length, and price lower than 40.00 dollars`
 * 1. `Find me natural looking and heat resistant hair extension with color: blonde, and length: 20 inch, and price lower than 40.00 dollars`
 * 2. `i am looking for natural looking and heat resistant hair extension in blonde color and 20 inch length, and price lower than 40.00 dollars`
 * 3. `i want to buy a hair extension which is natural looking and heat resistant, and its color should be blonde, and its length should be 20 inch, and price lower than 40.00 dollars`
 * 4. `i would like a blonde 20 inch hair extension that is natural looking and heat resistant, and price lower than 40.00 dollars`
 */
export function phrase(goal: WebshopGoal, phrasing: number): string {
  const plural = PLURAL.test(goal.type);
  const a = (text: string): string => (plural ? text : `${/^[aeiou]/.test(text) ? 'an' : 'a'} ${text}`);
  const is = plural ? 'are' : 'is';
  const attrs = listPhrases(goal.attributes);
  const price = `price lower than ${(goal.priceLimitCents / 100).toFixed(2)} dollars`;
  const o = goal.options;
  const inline = o.map((x) => `${x.value} ${x.name}`).join(' and ');
  switch (phrasing) {
    case 0:
      return `i need ${a(goal.type)} which ${is} ${attrs}${o.length > 0 ? `, in ${inline}` : ''}, and ${price}`;
    case 1:
      return `Find me ${attrs} ${goal.type}${o.length > 0 ? ` with ${o.map((x) => `${x.name}: ${x.value}`).join(', and ')}` : ''}, and ${price}`;
    case 2:
      return `i am looking for ${attrs} ${goal.type}${o.length > 0 ? ` in ${inline}` : ''}, and ${price}`;
    case 3:
      return `i want to buy ${a(goal.type)} which ${is} ${attrs}${o.map((x) => `, and its ${x.name} should be ${x.value}`).join('')}, and ${price}`;
    default:
      return `i would like ${a([...o.map((x) => x.value), goal.type].join(' '))} that ${is} ${attrs}, and ${price}`;
  }
}

/** A goal's identity, whatever its phrasing: type, attributes, options and limit. */
export function goalKey(goal: WebshopGoal): string {
  return JSON.stringify([goal.type, [...goal.attributes].sort(), goal.options.map((o) => `${o.name}=${o.value}`).sort(), goal.priceLimitCents]);
}

let trainingGoals: Set<string> | undefined;

function generateTask(split: Split, index: number): WebshopTask {
  const products = targetProducts(split);
  const product = products[index % products.length] as Product;
  if (split === 'heldout') trainingGoals ??= new Set(listWebshopTasks('train').map((t) => goalKey(t.goal)));
  for (let attempt = 0; attempt < (split === 'heldout' ? ATTEMPTS : 1); attempt++) {
    const seed = STREAM_BASE[split] + index * ATTEMPTS + attempt;
    const rng = new Rng(seed);
    const goal = drawGoal(product, rng);
    if (trainingGoals?.has(goalKey(goal)) === true && split === 'heldout') continue;
    const phrasing = rng.int(0, PHRASING_COUNT - 1);
    return { id: webshopTaskId(split, index), split, seed, target: product.asin, goal, phrasing, instruction: phrase(goal, phrasing) };
  }
  throw new RangeError(`webshop: held-out task ${index} draws only training goals after ${ATTEMPTS} seeds`);
}

const bank = indexedTaskBank('webshop', WEBSHOP_TASK_COUNTS, generateTask);

/** The task with this id. Throws a `TaskError` for an id that is malformed or out of range. */
export function getWebshopTask(id: string): WebshopTask {
  return bank.get(id);
}

/** Every task of a split (both splits when omitted), in index order; generated on first use. */
export function listWebshopTasks(split?: Split): WebshopTask[] {
  return bank.list(split);
}

/** The public description of a task: the instruction and what kind of goal it is, never the target product. */
export function webshopTaskInfo(task: WebshopTask): TaskInfo {
  return {
    id: task.id,
    domain: WEBSHOP_DOMAIN,
    instruction: task.instruction,
    split: task.split,
    metadata: { category: task.goal.category, productType: task.goal.type, attributes: task.goal.attributes.length, options: task.goal.options.length, phrasing: task.phrasing },
  };
}
