import { BaseEnv } from '../../core/base-env.js';
import { ConfigError } from '../../core/errors.js';
import type { Action, ActionErrorInfo, Split, TaskInfo, TimeStep } from '../../core/types.js';
import { formatPrice, getCatalogue, type Product } from './catalogue.js';
import { HOME_PAGE, MAX_RESULTS, pageCount, renderItemPage, renderResultsPage, RESULTS_PER_PAGE } from './pages.js';
import { webshopReward } from './reward.js';
import { getWebshopTask, listWebshopTasks, WEBSHOP_DOMAIN, WEBSHOP_TASK_COUNTS, webshopTaskId, webshopTaskInfo, type WebshopTask } from './tasks.js';
import { WEBSHOP_TOOLS } from './tools.js';

/** The registered id of this environment. */
export const WEBSHOP_ENV_ID = 'gymflow/webshop-v0';

/** Step limit applied by `make`: the `browser` profile's step budget (the expert needs about 5). */
export const WEBSHOP_MAX_STEPS = 15;

const TOOL_HINT =
  'Tools: search(query) lists matching products, 10 to a page; open(item) opens a product listed on the page; ' +
  'select(option, value) picks an option on a product page; next_page(), prev_page(); back(); ' +
  'buy() buys the open product with the selected options and ends the episode.';

/** Longest query a results page repeats back. */
const QUERY_SHOWN = 200;
const SPACES = /\s+/g;
const norm = (value: unknown): string => String(value).trim().toLowerCase().replace(SPACES, ' ');

/** The page the agent is on. */
type Page =
  | { kind: 'home' }
  | { kind: 'results'; query: string; hits: readonly Product[]; page: number }
  | { kind: 'item'; product: Product; selected: Record<string, string>; from: { kind: 'results'; query: string; hits: readonly Product[]; page: number } };

/** An action the store cannot carry out here: an observation with `info.error`, not an exception. */
class Refusal {
  constructor(
    readonly code: string,
    readonly reason: string,
  ) {}
}

/**
 * `gymflow/webshop-v0`: a lite WebShop (Yao et al. 2022). A generated store of 1,500 products in ten
 * departments (`catalogue.ts`), text pages (`pages.ts`): the search page, results ranked by BM25 over titles and
 * descriptions (`bm25.ts`), 10 to a page, and item pages with options, description and attributes. Tools:
 * `search`, `open`, `select`, `next_page`, `prev_page`, `back`, `buy` (`tools.ts`).
 *
 * Reward: 0 until `buy`, which ends the episode (terminated, reason `purchased`) with WebShop's reward
 * (`reward.ts`): r = r_type · (matched attributes + matched options + 1[price ≤ limit]) / (attributes + options
 * + 1), `info.score` = r, `info.success` only for r = 1, and `info.purchase` with the terms. The `MaxSteps`
 * wrapper truncates at {@link WEBSHOP_MAX_STEPS} (reason `max_steps`, score 0). An action the store cannot
 * carry out where the agent is — `open` an item not on the current results page, `next_page` past the last,
 * `select` an option the product does not have, `buy` from a results page — is an observation
 * `Error: …` with `info.error` (`not_on_results_page`, `item_not_on_page`, `no_next_page`, `no_previous_page`,
 * `not_on_item_page`, `unknown_option`, `unknown_value`, `nothing_to_go_back_to`), reward 0, and changes
 * nothing; unknown tools and bad params are BaseEnv's `unknown_tool` / `invalid_params`.
 */
export class WebshopEnv extends BaseEnv {
  readonly domain = WEBSHOP_DOMAIN;
  readonly tools = WEBSHOP_TOOLS;
  private task: WebshopTask | undefined;
  private page: Page = { kind: 'home' };

  /** Takes no options; throws a `ConfigError` for any. */
  constructor(options: Record<string, unknown> = {}) {
    super();
    const unknown = Object.keys(options);
    if (unknown.length > 0) throw new ConfigError(`${WEBSHOP_ENV_ID}: takes no options, got ${unknown.map((k) => `'${k}'`).join(', ')}`);
  }

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    // The same draw as `rng.pick(listWebshopTasks('train'))`, without generating the whole split.
    const task = getWebshopTask(options.task ?? webshopTaskId('train', this.rng.int(0, WEBSHOP_TASK_COUNTS.train - 1)));
    this.task = task;
    this.page = { kind: 'home' };
    // The store is built on the first reset of the process, not in the middle of an episode's first search.
    getCatalogue();
    return this.first(`Instruction: ${task.instruction}\n\n${HOME_PAGE}\n\n${TOOL_HINT}`, webshopTaskInfo(task));
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    try {
      if (action.tool === 'buy') return this.buy();
      return this.observe(this.act(action));
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      const error: ActionErrorInfo = { code: err.code, message: err.reason };
      return this.observe(`Error: ${err.reason}`, 0, { error });
    }
  }

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    return listWebshopTasks(split).map(webshopTaskInfo);
  }

  /** The number of tasks of a split (or both), without generating them. */
  override countTasks(split?: Split): number {
    return split ? WEBSHOP_TASK_COUNTS[split] : WEBSHOP_TASK_COUNTS.train + WEBSHOP_TASK_COUNTS.heldout;
  }

  /** Carries out a schema-valid action other than `buy` and returns the page it leads to. */
  private act(action: Action): string {
    const p = action.params;
    switch (action.tool) {
      case 'search': {
        const query = String(p.query).replace(SPACES, ' ').trim();
        const catalogue = getCatalogue();
        const hits = catalogue.index.search(query, MAX_RESULTS).map((h) => catalogue.products[h.doc] as Product);
        this.page = { kind: 'results', query: query.length > QUERY_SHOWN ? `${query.slice(0, QUERY_SHOWN - 1)}…` : query, hits, page: 0 };
        return this.render();
      }
      case 'open': {
        const results = this.results('open an item');
        const id = norm(p.item).toUpperCase();
        const listed = onPage(results);
        const product = listed.find((x) => x.asin === id);
        if (!product) {
          const ids = listed.map((x) => x.asin).join(', ');
          throw new Refusal('item_not_on_page', `item '${String(p.item)}' is not on this page${ids === '' ? ' (it lists no items)' : `; its items are ${ids}`}.`);
        }
        this.page = { kind: 'item', product, selected: {}, from: results };
        return this.render();
      }
      case 'select': {
        const item = this.item('select an option');
        const name = norm(p.option);
        const group = item.product.options.find((o) => o.name === name);
        if (!group) {
          const names = item.product.options.map((o) => o.name);
          throw new Refusal('unknown_option', `this product has no option '${String(p.option)}'${names.length === 0 ? ' (it has no options)' : `; its options are ${names.join(', ')}`}.`);
        }
        const value = norm(p.value);
        if (!group.values.includes(value)) throw new Refusal('unknown_value', `'${String(p.value)}' is not a ${group.name} of this product; its ${group.name} values are ${group.values.join(', ')}.`);
        item.selected[group.name] = value;
        return `You selected ${group.name}: ${value}.\n${this.render()}`;
      }
      case 'next_page':
      case 'prev_page': {
        const results = this.results(action.tool === 'next_page' ? 'go to the next page' : 'go to the previous page');
        const next = results.page + (action.tool === 'next_page' ? 1 : -1);
        if (next < 0) throw new Refusal('no_previous_page', 'this is the first page of results.');
        if (next >= pageCount(results.hits.length)) throw new Refusal('no_next_page', 'this is the last page of results.');
        this.page = { ...results, page: next };
        return this.render();
      }
      default: {
        // The validator lets only the declared tools through: this is `back`.
        const page = this.page;
        if (page.kind === 'home') throw new Refusal('nothing_to_go_back_to', 'you are on the search page; there is nothing to go back to.');
        this.page = page.kind === 'item' ? page.from : { kind: 'home' };
        return this.render();
      }
    }
  }

  private buy(): TimeStep {
    const item = this.item('buy');
    const task = this.task as WebshopTask;
    const { product, selected } = item;
    const r = webshopReward(product, selected, task.goal);
    const chosen = Object.entries(selected).map(([k, v]) => `${k}: ${v}`);
    const observation =
      `You bought ${product.asin}: ${product.title}${chosen.length > 0 ? ` (${chosen.join(', ')})` : ''} for ${formatPrice(product.priceCents)}. Thank you for shopping with us.\n` +
      `Your score: ${r.reward.toFixed(3)} (attributes ${r.attributes.matched}/${r.attributes.total}, options ${r.options.matched}/${r.options.total}, ` +
      `price ${r.priceOk ? 'within' : 'over'} the limit, product type ${r.type.rType}).`;
    const purchase = { asin: product.asin, selected: { ...selected }, priceCents: product.priceCents, ...r };
    return this.end(observation, r.reward, { success: r.reward === 1, score: r.reward, reason: 'purchased' }, { purchase });
  }

  private results(doing: string): Extract<Page, { kind: 'results' }> {
    if (this.page.kind !== 'results') throw new Refusal('not_on_results_page', `you can only ${doing} on a results page; you are on ${this.where()}.`);
    return this.page;
  }

  private item(doing: string): Extract<Page, { kind: 'item' }> {
    if (this.page.kind !== 'item') throw new Refusal('not_on_item_page', `you can only ${doing} on an item page; you are on ${this.where()}.`);
    return this.page;
  }

  private where(): string {
    return this.page.kind === 'home' ? 'the search page' : this.page.kind === 'results' ? 'a results page' : 'an item page';
  }

  private render(): string {
    const page = this.page;
    if (page.kind === 'home') return HOME_PAGE;
    if (page.kind === 'results') return renderResultsPage(page.query, page.page, page.hits.length, onPage(page));
    return renderItemPage(page.product, page.selected);
  }
}

/** The products of the results page shown now. */
function onPage(results: Extract<Page, { kind: 'results' }>): readonly Product[] {
  return results.hits.slice(results.page * RESULTS_PER_PAGE, (results.page + 1) * RESULTS_PER_PAGE);
}
