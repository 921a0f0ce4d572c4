import { describe, expect, it } from 'vitest';
import { playEpisode } from '../../core/__fixtures__/play-episode.js';
import { MaxSteps } from '../../core/wrappers/max-steps.js';
import { RandomAgent } from '../../policy/random.js';
import { WEBSHOP_MAX_STEPS, WebshopEnv } from './env.js';
import { meetsGoal, WebshopExpert } from './expert.js';
import { parseItemPage, parseResultsPage } from './pages.js';
import { getWebshopTask, listWebshopTasks } from './tasks.js';

// A deterministic sample: the first 200 held-out tasks (every product type four times).
const HELDOUT_SAMPLE = listWebshopTasks('heldout').slice(0, 200);

describe('WebshopExpert', () => {
  it('succeeds on at least 95% of held-out episodes, in every department, without an invalid action, reading only what pages show', async () => {
    const env = new MaxSteps(new WebshopEnv(), WEBSHOP_MAX_STEPS);
    const expert = new WebshopExpert();
    const departments = new Set<string>();
    let successes = 0;
    let steps = 0;
    for (const [i, task] of HELDOUT_SAMPLE.entries()) {
      const r = await playEpisode(env, expert, task.id, i);
      steps += r.steps.length;
      let shown = new Set<string>();
      for (const [k, { action, ts }] of r.steps.entries()) {
        expect(ts.info.error, `${task.id} step ${k}`).toBeUndefined();
        if (action.tool === 'open') expect(shown, `${task.id} opens ${String(action.params.item)}`).toContain(action.params.item);
        const page = parseResultsPage(ts.observation);
        if (page) shown = new Set(page.items.map((x) => x.asin));
      }
      expect(r.last).toMatchObject({ terminated: true, info: { reason: 'purchased' } });
      if (r.success) {
        successes += 1;
        departments.add(task.goal.category);
        expect(r.last.reward).toBe(1);
      }
    }
    expect(successes / HELDOUT_SAMPLE.length).toBeGreaterThanOrEqual(0.95);
    expect(departments.size).toBe(10);
    expect(steps / HELDOUT_SAMPLE.length).toBeLessThan(8);
  });

  it('checks an item page against every part of the goal', () => {
    const goal = getWebshopTask('webshop-heldout-00001').goal;
    const item = {
      asin: 'B000000000',
      title: goal.type,
      priceCents: goal.priceLimitCents,
      attributes: [...goal.attributes, 'other'],
      options: goal.options.map((o) => ({ name: o.name, values: ['x', o.value] })),
    };
    expect(meetsGoal(item, goal)).toBe(true);
    expect(meetsGoal({ ...item, priceCents: goal.priceLimitCents + 1 }, goal)).toBe(false);
    expect(meetsGoal({ ...item, attributes: item.attributes.slice(1) }, goal)).toBe(false);
    expect(meetsGoal({ ...item, options: item.options.map((o) => ({ ...o, values: ['x'] })) }, goal)).toBe(false);
  });

  it('buys what it is looking at when the step limit leaves no room to look further', async () => {
    // A task whose first candidates do not all match: with a tight limit the expert still buys, for a partial reward.
    const env = new MaxSteps(new WebshopEnv(), 4);
    let partial = 0;
    for (const [i, task] of HELDOUT_SAMPLE.slice(0, 60).entries()) {
      const r = await playEpisode(env, new WebshopExpert({ maxSteps: 4 }), task.id, i);
      expect(r.steps.length).toBeLessThanOrEqual(4);
      if (r.last.truncated) continue;
      expect(r.last).toMatchObject({ terminated: true, info: { reason: 'purchased' } });
      if (!r.success) {
        partial += 1;
        const item = parseItemPage(r.steps[r.steps.length - 2]?.ts.observation ?? '');
        expect(item && meetsGoal(item, task.goal)).toBe(false);
        expect(r.last.reward).toBeGreaterThan(0);
      }
    }
    expect(partial).toBeGreaterThan(0);
  });

  it('gives up with buy (refused off an item page) on a task it does not know', async () => {
    const expert = new WebshopExpert();
    const d = await expert.act({ task: { id: 'math-train-L1-00001', domain: 'math', instruction: '1+1' }, tools: [], observation: '', history: [], stepIndex: 0 });
    expect(d.action).toEqual({ tool: 'buy', params: {} });
  });
});

describe('the random agent', () => {
  it('succeeds on at most 15% of held-out episodes', async () => {
    const env = new MaxSteps(new WebshopEnv(), WEBSHOP_MAX_STEPS);
    let successes = 0;
    for (const [i, task] of HELDOUT_SAMPLE.entries()) if ((await playEpisode(env, new RandomAgent({ seed: 1 }), task.id, i)).success) successes += 1;
    expect(successes / HELDOUT_SAMPLE.length).toBeLessThanOrEqual(0.15);
  });
});
