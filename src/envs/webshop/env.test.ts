import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { make } from '../../core/registry.js';
import type { Action, TaskInfo, TimeStep } from '../../core/types.js';
import { isDone } from '../../core/types.js';
import { registerBuiltinEnvs } from '../register.js';
import { getCatalogue, type Product } from './catalogue.js';
import { WEBSHOP_ENV_ID, WEBSHOP_MAX_STEPS, WebshopEnv } from './env.js';
import { HOME_PAGE, parseItemPage, parseResultsPage } from './pages.js';
import { webshopReward } from './reward.js';
import { getWebshopTask } from './tasks.js';

const search = (query: string): Action => ({ tool: 'search', params: { query } });
const open = (item: string): Action => ({ tool: 'open', params: { item } });
const select = (option: string, value: string): Action => ({ tool: 'select', params: { option, value } });
const NEXT: Action = { tool: 'next_page', params: {} };
const PREV: Action = { tool: 'prev_page', params: {} };
const BACK: Action = { tool: 'back', params: {} };
const BUY: Action = { tool: 'buy', params: {} };

async function play(env: WebshopEnv, reset: { seed?: number; task?: string }, actions: readonly Action[]): Promise<TimeStep[]> {
  const out = [await env.reset(reset)];
  for (const action of actions) out.push(await env.step(action));
  return out;
}

const TASK = getWebshopTask('webshop-heldout-00007');
const target = getCatalogue().byAsin.get(TASK.target) as Product;

describe('WebshopEnv', () => {
  it('starts on the search page with the instruction, and reports the public task', async () => {
    const ts = await new WebshopEnv().reset({ task: TASK.id });
    expect(ts.observation).toBe(`Instruction: ${TASK.instruction}\n\n${HOME_PAGE}\n\n${ts.observation.split('\n\n')[2]}`);
    expect(ts.observation).toMatch(/\n\nTools: search\(query\)/);
    expect(ts.info.task as TaskInfo).toMatchObject({ id: TASK.id, domain: 'browser', split: 'heldout', instruction: TASK.instruction });
    expect(ts.observation).not.toContain(TASK.target);
  });

  it('searches with BM25 and pages through the 50 best results, 10 to a page', async () => {
    const env = new WebshopEnv();
    const query = 'hair extension natural looking';
    const [, first, second, back1, ...rest] = await play(env, { task: TASK.id }, [search(query), NEXT, PREV, NEXT, NEXT, NEXT, NEXT]);
    const ranked = getCatalogue().index.search(query, 50).map((h) => getCatalogue().products[h.doc]?.asin);
    const p1 = parseResultsPage(first?.observation ?? '');
    expect(p1).toMatchObject({ query, page: 1, pages: 5, total: 50 });
    expect(p1?.items.map((i) => i.asin)).toEqual(ranked.slice(0, 10));
    expect(parseResultsPage(second?.observation ?? '')?.items.map((i) => i.asin)).toEqual(ranked.slice(10, 20));
    expect(back1?.observation).toBe(first?.observation);
    const last = rest[rest.length - 1] as TimeStep;
    expect(parseResultsPage(last.observation)).toMatchObject({ page: 5, pages: 5 });
    expect(parseResultsPage(last.observation)?.items.map((i) => i.asin)).toEqual(ranked.slice(40, 50));
    expect(last.observation.endsWith('More: prev_page.')).toBe(true);
    expect((await env.step(NEXT)).info.error).toMatchObject({ code: 'no_next_page' });
    // An invalid action changes nothing: the page is still the fifth.
    expect((await env.step(PREV)).observation).toMatch(/page 4 of 5/);
    for (const ts of [first, second, back1, ...rest]) expect(ts).toMatchObject({ reward: 0, terminated: false, truncated: false });
  });

  it('opens an item listed on the page, selects its options, goes back to the same results page, then to the search page', async () => {
    const env = new WebshopEnv();
    const [, results] = await play(env, { task: TASK.id }, [search(target.title)]);
    expect(parseResultsPage(results?.observation ?? '')?.items[0]?.asin).toBe(target.asin);
    const item = await env.step(open(target.asin.toLowerCase()));
    expect(parseItemPage(item.observation)).toMatchObject({ asin: target.asin, title: target.title, priceCents: target.priceCents, attributes: target.attributes });
    expect(item.observation).toContain(`Description: ${target.description}`);
    const group = target.options[0] as Product['options'][number];
    const chosen = await env.step(select(group.name.toUpperCase(), ` ${(group.values[0] as string).toUpperCase()} `));
    expect(chosen.observation.startsWith(`You selected ${group.name}: ${group.values[0]}.\nItem ${target.asin}: `)).toBe(true);
    const again = await env.step(select(group.name, group.values[group.values.length - 1] as string));
    expect(parseItemPage(again.observation)?.options[0]?.selected).toBe(group.values[group.values.length - 1]);
    expect((await env.step(BACK)).observation).toBe(results?.observation);
    // Opening the item again starts with nothing selected.
    expect(parseItemPage((await env.step(open(target.asin))).observation)?.options[0]?.selected).toBeUndefined();
    await env.step(BACK);
    expect((await env.step(BACK)).observation).toBe(HOME_PAGE);
  });

  it('buys: the episode ends with WebShop\'s reward, 1 and success only for a full match', async () => {
    const env = new WebshopEnv();
    const choose = TASK.goal.options.map((o) => select(o.name, o.value));
    const steps = await play(env, { task: TASK.id }, [search(target.title), open(target.asin), ...choose, BUY]);
    const last = steps[steps.length - 1] as TimeStep;
    expect(last).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { success: true, score: 1, reason: 'purchased', purchase: { asin: target.asin, reward: 1 } } });
    expect(last.observation).toMatch(new RegExp(`^You bought ${target.asin}: .* for \\$\\d+\\.\\d\\d\\. Thank you for shopping with us\\.\\nYour score: 1\\.000 `));
    // The same product without its options: the attributes and price only.
    const partial = await play(env, { task: TASK.id }, [search(target.title), open(target.asin), BUY]);
    const r = webshopReward(target, {}, TASK.goal);
    expect(r.reward).toBeLessThan(1);
    expect(partial[partial.length - 1]).toMatchObject({ reward: r.reward, terminated: true, info: { success: false, score: r.reward, reason: 'purchased' } });
    expect(partial[partial.length - 1]?.observation).toContain(`options 0/${TASK.goal.options.length}`);
    // Another department's product earns r_type 0.1 at most.
    const other = getCatalogue().products.find((p) => p.category !== target.category) as Product;
    const wrong = await play(env, { task: TASK.id }, [search(other.title), open(other.asin), BUY]);
    expect(wrong[wrong.length - 1]?.reward).toBeLessThanOrEqual(0.1);
    expect(wrong[wrong.length - 1]?.info.purchase).toMatchObject({ type: { rType: 0.1, sameCategory: false } });
  });

  it('answers every kind of invalid action with info.error and reward 0, changing nothing', async () => {
    const env = new WebshopEnv();
    await env.reset({ task: TASK.id });
    let page = HOME_PAGE;
    const expectError = async (action: Action, code: string): Promise<void> => {
      const ts = await env.step(action);
      expect(ts, `${action.tool} ${JSON.stringify(action.params)}`).toMatchObject({ reward: 0, terminated: false, truncated: false, info: { error: { code } } });
      expect(ts.observation).toMatch(/^Error: /);
      // An error says why; it does not show a page (the page stays what it was: the steps below build on it).
      if (code !== 'unknown_tool' && code !== 'invalid_params') expect(ts.observation).not.toContain(page);
    };
    await expectError({ tool: 'click', params: { element: 'Buy Now' } }, 'unknown_tool');
    await expectError({ tool: 'search', params: {} }, 'invalid_params');
    await expectError({ tool: 'search', params: { query: '' } }, 'invalid_params');
    await expectError({ tool: 'select', params: { option: 'color' } }, 'invalid_params');
    await expectError({ tool: 'buy', params: { now: true } }, 'invalid_params');
    await expectError(BACK, 'nothing_to_go_back_to');
    await expectError(NEXT, 'not_on_results_page');
    await expectError(open(target.asin), 'not_on_results_page');
    await expectError(BUY, 'not_on_item_page');
    await expectError(select('color', 'black'), 'not_on_item_page');
    page = (await env.step(search(target.title))).observation;
    await expectError(PREV, 'no_previous_page');
    await expectError(BUY, 'not_on_item_page');
    const elsewhere = getCatalogue().products.find((p) => !page.includes(p.asin)) as Product;
    await expectError(open(elsewhere.asin), 'item_not_on_page');
    const refused = await env.step(open('B000000000'));
    expect(refused.observation).toContain(`its items are ${target.asin}, `);
    expect((await env.step(NEXT)).observation).toMatch(/page 2 of/);
    await env.step(PREV);
    page = (await env.step(open(target.asin))).observation;
    await expectError(select('flavour', 'mint'), 'unknown_option');
    await expectError(select(target.options[0]?.name as string, 'no such value'), 'unknown_value');
    await expectError(NEXT, 'not_on_results_page');
    await expectError(open(target.asin), 'not_on_results_page');
    // Still on the item page, opened from the first results page.
    expect(parseResultsPage((await env.step(BACK)).observation)?.page).toBe(1);
    const none = await env.step(search('zzzz qqqq'));
    expect(none.observation).toBe('Search results for "zzzz qqqq": no products match. Try other words with search(query).');
    await expectError(NEXT, 'no_next_page');
    await expectError(open(target.asin), 'item_not_on_page');
    expect((await env.step(open(target.asin))).observation).toContain('(it lists no items)');
  });

  it('is deterministic for the same seed, across instances, and draws training tasks without one', async () => {
    const actions = [search('water bottle stainless steel'), NEXT, open('B000000000'), BACK];
    const a = await play(new WebshopEnv(), { seed: 11 }, actions);
    const b = await play(new WebshopEnv(), { seed: 11 }, actions);
    expect(b).toEqual(a);
    const c = await play(new WebshopEnv(), { seed: 12 }, actions);
    expect(c[0]?.observation).not.toBe(a[0]?.observation);
    expect((a[0]?.info.task as TaskInfo).split).toBe('train');
  });

  it('refuses options and lists its tasks by split; make() truncates at the step limit', async () => {
    expect(() => new WebshopEnv({ pages: 3 })).toThrow(ConfigError);
    registerBuiltinEnvs();
    expect(() => make(WEBSHOP_ENV_ID, { kwargs: { pages: 3 } })).toThrow("gymflow/webshop-v0: takes no options, got 'pages'");
    const env = new WebshopEnv();
    const wrapped = make(WEBSHOP_ENV_ID);
    for (const split of ['train', 'heldout', undefined] as const) {
      expect(env.countTasks(split)).toBe(env.listTasks(split).length);
      expect(wrapped.countTasks?.(split)).toBe(env.listTasks(split).length);
    }
    expect(env.countTasks('heldout')).toBe(300);
    expect(env.tools.map((t) => `${t.name}:${t.category}`)).toEqual(['search:search', 'open:execute', 'select:write', 'next_page:execute', 'prev_page:execute', 'back:execute', 'buy:submit']);
    let ts = await wrapped.reset({ task: TASK.id, seed: 1 });
    let steps = 0;
    while (!isDone(ts)) {
      ts = await wrapped.step(search('red'));
      steps += 1;
    }
    expect(steps).toBe(WEBSHOP_MAX_STEPS);
    expect(ts).toMatchObject({ terminated: false, truncated: true, info: { reason: 'max_steps' } });
    await wrapped.close();
  });
});
