/**
 * The Temporal Web UI driven in a real browser (puppeteer-core and Debian's Chromium, no browser download): find a
 * gymflow run by its search attributes, check the summaries the UI shows, read `pipeline_status` in the Queries tab.
 * Any UI works — the dev server's (`gymflow dev`, tests/web-ui.test.ts) or a cluster's ui-server
 * (tests/cluster.test.ts) — since only its base URL and namespace are needed. {@link holdAfterTraining} keeps a loop
 * still while the browser reads it, and {@link checkRunInWebUi} is the whole check both tests make.
 *
 * Selectors go by role and accessible name or visible text (what a user reads), and every step waits for what it
 * needs to appear, never for a fixed time.
 */
import { resolve } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import type { PipelineStatus } from '../../src/loop/status.js';
import { pauseSignal, pipelineStatusQuery } from '../../workflows/messages.js';
import { chromiumPath } from './requires.js';
import { until } from './until.js';

/**
 * The little of the page's DOM the functions below use; they run in the browser, and the project compiles without
 * the DOM library (adding it would type all of Node's code against browser globals too).
 */
interface PageText {
  innerText: string;
}
declare const document: { body: PageText; querySelectorAll(selector: string): Iterable<PageText> };

/** Where the UI is and what to look for. */
export interface WebUiRun {
  /** The UI's base URL, e.g. `http://127.0.0.1:8233`. */
  uiUrl: string;
  namespace: string;
  /** The run's `GymflowExperiment`. */
  experiment: string;
  workflowId: string;
  /**
   * The run to open when the list holds several of the workflow (a loop that continued as new lists each run under
   * its id): its link is the one whose address names this run id. Default: the first link, the newest run.
   */
  runId?: string;
}

/** Headless Chromium for the tests (`--no-sandbox`: the tests run as root in CI containers). */
export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/**
 * Opens the UI's workflow list filtered by the visibility query `GymflowExperiment = "<experiment>"`, and the run
 * from there (the link named by its workflow id). Resolves on the run's page.
 */
export async function openRunByExperiment(page: Page, run: WebUiRun, timeout = 60_000): Promise<void> {
  const query = encodeURIComponent(`GymflowExperiment = "${run.experiment}"`);
  await page.goto(`${run.uiUrl}/namespaces/${encodeURIComponent(run.namespace)}/workflows?query=${query}`, { waitUntil: 'domcontentloaded', timeout });
  // The list's row links (id, run id, type) all lead to the run; the id's is the one named by it.
  let link = await page.waitForSelector(`::-p-aria([name="${run.workflowId}"][role="link"])`, { timeout });
  if (!link) throw new Error(`no link to ${run.workflowId} in the UI's list for GymflowExperiment = "${run.experiment}"`);
  if (run.runId !== undefined) {
    const path = `/workflows/${encodeURIComponent(run.workflowId)}/${run.runId}`;
    // The list may draw the newest run before it draws the older ones: wait for the one asked for.
    link = await page.waitForSelector(`a[href*="${path}"]`, { timeout }).catch(async (err: unknown) => {
      const hrefs = await page.$$eval('a', (as) => as.map((a) => (a as unknown as { href: string }).href));
      throw new Error(`no link to run ${run.runId} of ${run.workflowId} in the UI's list; its links: ${hrefs.filter((h) => h.includes('/workflows/')).join(', ')}`, { cause: err });
    });
    if (!link) throw new Error(`no link to run ${run.runId} of ${run.workflowId}`);
  }
  await link.click();
  await page.waitForSelector('::-p-aria([name="Queries"][role="tab"])', { timeout });
}

/** The visible text of the page and of each of its `/render` frames (where newer UIs draw markdown: summaries). */
async function textsShown(page: Page): Promise<string[]> {
  const render = `${new URL(page.url()).origin}/render?`;
  const frames = page.frames().filter((f) => f === page.mainFrame() || (f.url().startsWith(render) && !f.detached));
  return Promise.all(frames.map((f) => f.evaluate(() => document.body.innerText).catch(() => '')));
}

/**
 * Waits until the run's timeline (its default tab) shows every one of `texts` (activity summaries). The dev server's
 * UI writes each label into the page; ui-server 2.58 renders each as markdown in a `/render` frame of its own: both
 * are read.
 */
export async function timelineShows(page: Page, texts: readonly string[], timeout = 60_000): Promise<void> {
  await (await page.waitForSelector('::-p-aria([name="Timeline"][role="tab"])', { timeout }))?.click();
  const deadline = Date.now() + timeout;
  let missing = [...texts];
  while (Date.now() < deadline) {
    const shown = await textsShown(page);
    missing = texts.filter((t) => !shown.some((s) => s.includes(t)));
    if (missing.length === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the timeline did not show ${JSON.stringify(missing)} within ${timeout} ms`);
}

/**
 * Opens the User Metadata tab and waits until one of the texts `read` returns from the page contains `expected`;
 * returns that text. Throws with what was shown when none did within `timeout`.
 */
async function userMetadataText(page: Page, expected: string, read: (page: Page) => Promise<string[]>, timeout: number): Promise<string> {
  await (await page.waitForSelector('::-p-aria([name="User Metadata"][role="tab"])', { timeout }))?.click();
  let shown: string[] = [];
  const found = await until(`the User Metadata tab to show ${JSON.stringify(expected)}`, timeout, async () => {
    shown = await read(page);
    return shown.find((t) => t.includes(expected));
  }).catch(() => undefined);
  if (found === undefined) throw new Error(`the User Metadata tab did not show ${JSON.stringify(expected)} within ${timeout} ms; it shows ${JSON.stringify(shown.map((t) => t.slice(0, 2000)))}`);
  return found;
}

/**
 * The run's summary as the User Metadata tab shows it (the UI renders it as markdown in a frame of its own, served
 * from `/render`): waits until it contains `expected` and returns its text. The tab may draw its frame more than
 * once (a first, empty document, then the rendered one): every `/render` frame of the page is looked at.
 */
export function userMetadataSummary(page: Page, expected: string, timeout = 60_000): Promise<string> {
  const render = (p: Page): Promise<string[]> => {
    const prefix = `${new URL(p.url()).origin}/render?`;
    const frames = p.frames().filter((f) => f.url().startsWith(prefix) && !f.detached);
    return Promise.all(frames.map((f) => f.evaluate(() => document.body.innerText.trim()).catch(() => '')));
  };
  return userMetadataText(page, expected, render, timeout);
}

/**
 * Waits until the User Metadata tab shows `expected` — the run's current details, as the UI renders their Markdown
 * (`**bold**` reads as its text) — in the page or one of its `/render` frames, and returns that text.
 */
export function userMetadataShows(page: Page, expected: string, timeout = 60_000): Promise<string> {
  return userMetadataText(page, expected, textsShown, timeout);
}

/**
 * Runs query `queryType` in the Queries tab (picked from its Query Type list, then Run Query) and returns the result
 * panel's text once it contains `expected`. The panel is a code editor that draws only the lines in view: the text
 * is the top of the JSON, not necessarily all of it.
 */
export async function runQueryInUi(page: Page, queryType: string, expected: string, timeout = 60_000): Promise<string> {
  await (await page.waitForSelector('::-p-aria([name="Queries"][role="tab"])', { timeout }))?.click();
  const deadline = Date.now() + timeout;
  const left = (cap: number): number => Math.min(cap, Math.max(1, deadline - Date.now()));
  // The tab fills its Query Type list from the run itself (the `__temporal_workflow_metadata` query) and may set its
  // own choice when that answer lands, after ours: each try picks the type again if it changed, runs the query (the
  // button reads Run Query, then Refresh Query) and waits a while for the result.
  for (let attempt = 1; ; attempt++) {
    try {
      const select = await page.waitForSelector('::-p-aria([name="Query Type"])', { timeout: left(20_000) });
      if (!select) throw new Error('no Query Type field');
      if ((await select.evaluate((el) => (el as unknown as { value: string }).value)) !== queryType) {
        await select.click();
        const option = await page.waitForSelector(`[role="listbox"] [role="option"] ::-p-text(${queryType})`, { visible: true, timeout: left(20_000) });
        await option?.click();
        await page.waitForFunction((el: { value: string }, want: string) => el.value === want, { timeout: left(20_000) }, select as unknown as { value: string }, queryType);
      }
      const button = (await page.$('::-p-aria([name="Run Query"][role="button"])')) ?? (await page.$('::-p-aria([name="Refresh Query"][role="button"])'));
      await button?.click();
      const handle = await page.waitForFunction(
        (want: string) => [...document.querySelectorAll('.cm-content')].map((e) => e.innerText).find((t) => t.includes(want)),
        { timeout: left(20_000), polling: 250 },
        expected,
      );
      return (await handle.jsonValue()) as string;
    } catch (err) {
      if (Date.now() < deadline) continue;
      const shown = await page.evaluate(() => document.body.innerText).catch(() => '(page unreadable)');
      throw new Error(`the Queries tab did not show ${expected} after running ${queryType} ${attempt} time(s); the page shows:\n${shown.slice(-3000)}`, { cause: err });
    }
  }
}

/**
 * Holds a running training loop still for the browser: waits until it reaches its train stage, signals `pause`,
 * and resolves once the loop says `paused` with its training done (a paused loop is a running workflow that waits
 * before its next stage, so what the UI shows does not race the loop). Throws when the loop fails or completes
 * first. Resume it with `resumeSignal`.
 */
export async function holdAfterTraining(handle: WorkflowHandle, timeoutMs = 240_000): Promise<PipelineStatus> {
  const status = (): Promise<PipelineStatus> => handle.query(pipelineStatusQuery);
  const settled = (s: PipelineStatus): Error => new Error(`${handle.workflowId} ${s.state} at ${s.stage} before the browser could read it: ${JSON.stringify(s.lastError)}`);
  // The query fails until the first workflow task ran: until() keeps polling through that.
  await until(`${handle.workflowId} to reach its train stage`, timeoutMs, async () => {
    const s = await status();
    if (s.state === 'failed' || s.state === 'completed') throw settled(s);
    return s.stage === 'train' ? s : undefined;
  });
  await handle.signal(pauseSignal);
  return until(`${handle.workflowId} to pause after training`, timeoutMs, async () => {
    const s = await status();
    if (s.state === 'failed' || s.state === 'completed') throw settled(s);
    return s.state === 'paused' && s.stages.train.state === 'done' ? s : undefined;
  });
}

/** What {@link checkRunInWebUi} expects to see. */
export interface WebUiExpectations {
  /**
   * Activity summaries the timeline shows. Leave it out for ui-server 2.58 (a cluster's UI): its timeline is a
   * virtual list that draws each label, as markdown in a `/render` frame, only while its row is drawn, which a
   * headless page does not reliably do for every row (seen: some labels never appeared within a minute).
   */
  timeline?: readonly string[];
  /**
   * The run's summary in the User Metadata tab. Only the run the client started has one (continue-as-new takes no
   * summary): leave it out for a loop past its first run (one with a baseline evaluation continues after it).
   */
  summary?: string;
  /** Text of the run's current details the User Metadata tab shows (every run has them, continued ones too). */
  details?: string;
  /** Strings the `pipeline_status` JSON in the Queries tab contains (the first is waited for). */
  status: readonly [string, ...string[]];
  /** A folder to write the docs' screenshots into (`web-ui-timeline.png`, `web-ui-pipeline-status.png`). */
  screenshots?: string;
}

/**
 * The browser's whole check of a run, in a new page: finds it in the workflow list by `GymflowExperiment`, opens it,
 * waits for the timeline's summaries and the User Metadata tab's summary, runs `pipeline_status` in the Queries tab
 * and checks its JSON. Throws naming what was not shown; returns the query panel's text.
 */
export async function checkRunInWebUi(browser: Browser, run: WebUiRun, expect: WebUiExpectations): Promise<string> {
  const page = await browser.newPage();
  try {
    await page.setViewport({ width: 1400, height: 1000 });
    await openRunByExperiment(page, run);
    const want = `/workflows/${run.workflowId}/${run.runId ?? ''}`;
    if (!page.url().includes(want)) throw new Error(`the link to ${want} opened ${page.url()}`);
    if (expect.timeline !== undefined) await timelineShows(page, expect.timeline);
    if (expect.screenshots !== undefined) {
      // The page scrolls inside its own pane: bring the timeline's rows into view.
      await (await page.$('::-p-text(iter 1 · tasks · plan)'))?.scrollIntoView();
      await page.screenshot({ path: resolve(expect.screenshots, 'web-ui-timeline.png') });
    }
    if (expect.summary !== undefined) {
      const summary = await userMetadataSummary(page, expect.summary);
      if (summary !== expect.summary) throw new Error(`the User Metadata tab shows ${JSON.stringify(summary)}, not ${JSON.stringify(expect.summary)}`);
    }
    if (expect.details !== undefined) await userMetadataShows(page, expect.details);
    const [first, ...rest] = expect.status;
    const shown = await runQueryInUi(page, 'pipeline_status', first, 120_000);
    const missing = rest.filter((t) => !shown.includes(t));
    if (missing.length > 0) throw new Error(`pipeline_status in the Queries tab lacks ${JSON.stringify(missing)}; it shows:\n${shown}`);
    if (expect.screenshots !== undefined) await page.screenshot({ path: resolve(expect.screenshots, 'web-ui-pipeline-status.png') });
    return shown;
  } finally {
    await page.close();
  }
}
