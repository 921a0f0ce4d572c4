import type { ToolSpec } from '../../core/types.js';
import { strictTool as tool, textParam as text } from '../shared/tool-spec.js';

/** The tools of `gymflow/webshop-v0`: WebShop's search bar, links and buttons, as tool calls. */

/**
 * The tools, in the order they are offered. Categories: `open`, `next_page`, `prev_page` and `back` change
 * the page (`execute`, so a repeated navigation is not scored as a redundant read), `select` changes the
 * order being prepared (`write`), `buy` ends the episode (`submit`).
 */
export const WEBSHOP_TOOLS: readonly ToolSpec[] = [
  tool('search', 'Search the store from any page; shows the first page of results (10 products of the 50 best, ranked by BM25).', 'search', {
    query: text('Search words, e.g. "natural looking hair extension".'),
  }),
  tool('open', 'Open the page of a product listed on the current results page.', 'execute', { item: text('The item id shown on the results page, e.g. "B07ZK3LPWN".') }),
  tool('select', 'On an item page, select a value of one of its option groups (selecting again replaces it).', 'write', {
    option: text('The option group, e.g. "color" or "size".'),
    value: text('One of the values the page lists for it, e.g. "navy".'),
  }),
  tool('next_page', 'Show the next page of search results.', 'execute', {}),
  tool('prev_page', 'Show the previous page of search results.', 'execute', {}),
  tool('back', 'Go back: from an item page to its results page, from a results page to the search page.', 'execute', {}),
  tool('buy', 'Buy the product of the current item page with the options selected; ends the episode.', 'submit', {}),
];
