import type { Action, TaskInfo } from '../../core/types.js';
import { ExpertFailed, ScriptedExpert, type Script } from '../shared/scripted-expert.js';
import { WEBSHOP_MAX_STEPS } from './env.js';
import { parseItemPage, parseResultsPage, type ItemPage, type ListedItem } from './pages.js';
import { getWebshopTask, type WebshopGoal } from './tasks.js';
import { tokenize } from './tokenize.js';

/**
 * The expert of `gymflow/webshop-v0`: it shops the way a careful person does, through the pages. It knows
 * what the instruction asks — the product type, the attributes, the options and the price limit — not which
 * product the instruction was drawn from. It searches with the instruction's key words (the type and the
 * attributes), reads each results page, opens the listed products whose title names the type and whose price
 * is within the limit, best ranked first, and checks each item page: every attribute there and every wanted
 * option offered. The first that matches it buys, after selecting the options; one that does not, it leaves
 * with `back`, and after the page's candidates it goes to the next page. When the step limit would leave no
 * room to try another product it buys the one it is looking at, selecting what it can (a partial reward);
 * when no candidate is left anywhere it buys the best-ranked product that names the type.
 */

/** The words of a type a title must contain to name it. */
function namesType(title: string, typeWords: readonly string[]): boolean {
  const words = new Set(tokenize(title));
  return typeWords.every((w) => words.has(w));
}

/** Whether an item page meets every part of the goal. */
export function meetsGoal(item: ItemPage, goal: WebshopGoal): boolean {
  const attributes = new Set(item.attributes);
  return (
    item.priceCents <= goal.priceLimitCents &&
    goal.attributes.every((a) => attributes.has(a)) &&
    goal.options.every((o) => item.options.some((g) => g.name === o.name && g.values.includes(o.value)))
  );
}

function* solve(goal: WebshopGoal, maxSteps: number): Script {
  let used = 0;
  function* step(action: Action): Generator<Action, string, string> {
    used += 1;
    return yield action;
  }
  /** Selects the wanted options the item offers, then buys. */
  function* checkout(item: ItemPage): Generator<Action, void, string> {
    for (const o of goal.options) {
      if (item.options.some((g) => g.name === o.name && g.values.includes(o.value))) yield* step({ tool: 'select', params: { option: o.name, value: o.value } });
    }
    yield* step({ tool: 'buy', params: {} });
  }
  const typeWords = tokenize(goal.type);
  // Steps to buy a product once its page is open: one select per wanted option, then buy.
  const toBuy = goal.options.length + 1;
  const tried = new Set<string>();
  let observation = yield* step({ tool: 'search', params: { query: [goal.type, ...goal.attributes].join(' ') } });
  let fallback: ListedItem | undefined;
  for (;;) {
    const page = parseResultsPage(observation);
    if (!page) throw new ExpertFailed(`webshop expert: expected a results page, got: ${observation.slice(0, 80)}`);
    const named = page.items.filter((it) => namesType(it.title, typeWords));
    fallback ??= named[0] ?? page.items[0];
    for (const candidate of named) {
      if (tried.has(candidate.asin) || candidate.priceCents > goal.priceLimitCents) continue;
      tried.add(candidate.asin);
      const item = parseItemPage(yield* step({ tool: 'open', params: { item: candidate.asin } }));
      if (!item) throw new ExpertFailed(`webshop expert: could not read the page of ${candidate.asin}`);
      // Trying another product costs back, perhaps next_page, and open before its checkout: without room
      // for that, this one is bought as it is.
      if (meetsGoal(item, goal) || maxSteps - used < 3 + toBuy) {
        yield* checkout(item);
        return;
      }
      observation = yield* step({ tool: 'back', params: {} });
    }
    if (page.page < page.pages && maxSteps - used >= 2 + toBuy) {
      observation = yield* step({ tool: 'next_page', params: {} });
      continue;
    }
    // No candidate left: buy the best-ranked product that names the type, on the page shown now if it is there.
    if (!fallback) throw new ExpertFailed(`webshop expert: the search for '${page.query}' found nothing`);
    const here = page.items.find((it) => it.asin === fallback?.asin) ?? named[0] ?? page.items[0];
    if (!here) throw new ExpertFailed('webshop expert: an empty results page');
    const item = parseItemPage(yield* step({ tool: 'open', params: { item: here.asin } }));
    if (!item) throw new ExpertFailed(`webshop expert: could not read the page of ${here.asin}`);
    yield* checkout(item);
    return;
  }
}

/** Options of {@link WebshopExpert}. */
export interface WebshopExpertOptions {
  /** The episode's step limit the expert plans within (default {@link WEBSHOP_MAX_STEPS}, `make`'s). */
  maxSteps?: number;
}

/** The expert agent for `gymflow/webshop-v0` (see the module comment). */
export class WebshopExpert extends ScriptedExpert {
  private readonly maxSteps: number;

  constructor(options: WebshopExpertOptions = {}) {
    super({ name: 'webshop-expert' }, { tool: 'buy', params: {} });
    this.maxSteps = options.maxSteps ?? WEBSHOP_MAX_STEPS;
  }

  /** Shopping for the task's goal (an unknown task id: the agent only calls `buy`, refused off an item page). */
  protected start(task: TaskInfo): Script {
    return solve(getWebshopTask(task.id).goal, this.maxSteps);
  }
}
