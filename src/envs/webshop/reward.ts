import type { Product } from './catalogue.js';
import type { WebshopGoal } from './tasks.js';
import { tokenize } from './tokenize.js';

/**
 * WebShop's reward (Yao et al., "WebShop: Towards Scalable Real-World Web Interaction with Grounded Language
 * Agents", NeurIPS 2022, §3), paid once, when the agent buys product y with options Y_opt for goal u:
 *
 * r = r_type · (|U_att ∩ Y_att| + |U_opt ∩ Y_opt| + 1[y_price ≤ u_price]) / (|U_att| + |U_opt| + 1)
 *
 * - U_att: the goal's attributes; an attribute matches when the product has it (its attributes are named on
 *   its page and in its description).
 * - U_opt: the goal's options (group and value); one matches when the agent selected that value of that group
 *   before buying. An option not selected does not match.
 * - 1[y_price ≤ u_price]: the price is at most the instruction's limit.
 * - r_type, the product-type factor: WebShop's code (`get_type_reward`) lowers the reward when the bought
 *   product is plainly another kind of thing than the one asked for, by its category and by how many of the
 *   requested type's words its title has. Here, with T the words of the requested type (`hair extension` →
 *   hair, extension) and the title score |T ∩ title words| / |T|:
 *   - **1** — same department and the title names the type (title score 1);
 *   - **0.5** — same department but the title does not name the type (a shampoo for a hair-extension
 *     request), or another department whose title does (a pet shampoo for a shampoo request);
 *   - **0.1** — another department and a title that does not name the type.
 *   WebShop itself gives 1, 0.5, 0.1 or 0 from a noun parse of the titles and its category paths; with a
 *   generated catalogue the department and the type's words are exact, so the three levels above follow its
 *   intent without a parser.
 *
 * The reward is 1 only for a full match — right type, every attribute, every option, within the price — and
 * `info.success` is true exactly then.
 *
 * Worked example: the goal asks for a hair extension that is natural looking and heat resistant, color
 * blonde, length 20 inch, price lower than 40.00 dollars (|U_att| = 2, |U_opt| = 2). The agent buys a hair
 * extension (r_type = 1) that is natural looking but not heat resistant, selecting color blonde and length
 * 18 inch, for $32.99: r = 1 · (1 + 1 + 1) / (2 + 2 + 1) = 0.6. Had it bought a shampoo (same department,
 * title without "extension": r_type = 0.5) with no attribute or option matching at $9.99, r = 0.5 · (0 + 0 + 1)
 * / 5 = 0.1.
 */

/** The product-type factor and what it was computed from. */
export interface TypeReward {
  /** 1, 0.5 or 0.1 (see the module documentation). */
  rType: number;
  sameCategory: boolean;
  /** The share of the requested type's words the title has, in [0, 1]. */
  titleScore: number;
}

/** The reward of a purchase and each of its terms. */
export interface WebshopReward {
  /** r, in [0, 1]. */
  reward: number;
  type: TypeReward;
  attributes: { matched: number; total: number };
  options: { matched: number; total: number };
  /** 1[y_price ≤ u_price]. */
  priceOk: boolean;
}

/** The product-type factor r_type of buying `product` for `goal`. */
export function typeReward(product: Pick<Product, 'category' | 'title'>, goal: Pick<WebshopGoal, 'category' | 'type'>): TypeReward {
  const wanted = new Set(tokenize(goal.type));
  const title = new Set(tokenize(product.title));
  let shared = 0;
  for (const w of wanted) if (title.has(w)) shared += 1;
  const titleScore = wanted.size === 0 ? 0 : shared / wanted.size;
  const sameCategory = product.category === goal.category;
  const rType = sameCategory && titleScore === 1 ? 1 : sameCategory || titleScore === 1 ? 0.5 : 0.1;
  return { rType, sameCategory, titleScore };
}

/**
 * The reward of buying `product` with the options `selected` (group → value) for `goal`, with its terms.
 *
 * @example
 * ```ts
 * webshopReward(product, { color: 'blonde', length: '18 inch' }, goal).reward; // 0.6 in the worked example
 * ```
 */
export function webshopReward(
  product: Pick<Product, 'category' | 'title' | 'attributes' | 'priceCents'>,
  selected: Readonly<Record<string, string>>,
  goal: WebshopGoal,
): WebshopReward {
  const type = typeReward(product, goal);
  const has = new Set(product.attributes);
  const attributes = { matched: goal.attributes.filter((a) => has.has(a)).length, total: goal.attributes.length };
  const options = { matched: goal.options.filter((o) => selected[o.name] === o.value).length, total: goal.options.length };
  const priceOk = product.priceCents <= goal.priceLimitCents;
  const reward = (type.rType * (attributes.matched + options.matched + (priceOk ? 1 : 0))) / (attributes.total + options.total + 1);
  return { reward, type, attributes, options, priceOk };
}
