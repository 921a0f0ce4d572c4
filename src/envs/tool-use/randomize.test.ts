import { describe, expect, it } from 'vitest';
import { make } from '../../core/registry.js';
import { Rng } from '../../core/rng.js';
import { runEpisode } from '../../core/rollout.js';
import type { Action } from '../../core/types.js';
import { registerBuiltinEnvs } from '../register.js';
import { TOOL_USE_RANDOMIZED_ENV_ID, ToolUseEnv } from './env.js';
import { ToolUseExpert } from './expert.js';
import { expectedAnswer, formatExpected, getToolTask, listToolTasks } from './index.js';
import { defaultKnowledgeBase } from './knowledge-base.js';
import { FACTOR_RANGE, randomizeEntities, redrawValue, YEAR_RANGE } from './randomize.js';
import { ATTRIBUTES, ENTITIES } from './world.js';

const DIFF_TASK = listToolTasks('heldout').find((t) => t.kind === 'diff-years')?.id ?? '';

async function lookup(env: ToolUseEnv, seed: number, entity: string, attribute: string): Promise<string> {
  await env.reset({ seed, task: DIFF_TASK });
  return (await env.step({ tool: 'lookup', params: { entity, attribute } })).observation;
}

describe('randomizeValues (domain randomisation)', () => {
  it('redraws every numeric fact and keeps names, links and strings', () => {
    const world = randomizeEntities(ENTITIES, new Rng(7));
    expect(world.map((e) => e.name)).toEqual(ENTITIES.map((e) => e.name));
    let numeric = 0;
    let changed = 0;
    world.forEach((entity, i) => {
      const original = ENTITIES[i]?.attributes ?? {};
      expect(Object.keys(entity.attributes)).toEqual(Object.keys(original));
      for (const [name, value] of Object.entries(entity.attributes)) {
        const type = ATTRIBUTES[name]?.type;
        if (type === 'number' || type === 'year') {
          numeric++;
          if (value !== original[name]) changed++;
          expect(typeof value).toBe('number');
        } else {
          expect(value).toBe(original[name]);
        }
      }
    });
    expect(numeric).toBeGreaterThan(100);
    expect(changed / numeric).toBeGreaterThan(0.95);
    // Same seed, same world; another seed, another world.
    expect(randomizeEntities(ENTITIES, new Rng(7))).toEqual(world);
    expect(randomizeEntities(ENTITIES, new Rng(8))).not.toEqual(world);
  });

  it('keeps each value printable the way the original is (range, granularity, decimals)', () => {
    const rng = new Rng(1);
    for (let i = 0; i < 2000; i++) {
      const year = redrawValue(1811, { type: 'year' }, rng);
      expect(Number.isInteger(year) && year >= YEAR_RANGE[0] && year <= YEAR_RANGE[1]).toBe(true);
      const population = redrawValue(48200, { type: 'number' }, rng);
      expect(population % 100).toBe(0);
      expect(population).toBeGreaterThanOrEqual(100);
      expect(population).toBeLessThanOrEqual(48200 * FACTOR_RANGE[1] + 50);
      const price = redrawValue(129.99, { type: 'number', decimals: 2 }, rng);
      expect(price).toBe(Number(price.toFixed(2)));
      expect(price).toBeGreaterThanOrEqual(0.01);
      const weight = redrawValue(2.4, { type: 'number', unit: 'kg' }, rng);
      expect(weight).toBe(Number(weight.toFixed(1)));
      expect(redrawValue(4, { type: 'number' }, rng)).toBeGreaterThanOrEqual(1);
    }
  });

  it('answers lookups, searches and the submit check from the episode world', async () => {
    const fixed = await lookup(new ToolUseEnv(), 3, 'Saltgrave Mineral Company', 'founded');
    expect(fixed).toBe('Saltgrave Mineral Company (company) — founded: 1811');
    const env = new ToolUseEnv({ randomizeValues: true });
    const a = await lookup(env, 3, 'Saltgrave Mineral Company', 'founded');
    expect(a).toMatch(/^Saltgrave Mineral Company \(company\) — founded: \d{4}$/);
    expect(a).not.toBe(fixed);
    expect(await lookup(new ToolUseEnv({ randomizeValues: true }), 3, 'Saltgrave Mineral Company', 'founded')).toBe(a); // seeded
    expect(await lookup(env, 4, 'Saltgrave Mineral Company', 'founded')).not.toBe(a); // a new world per episode
    // Strings and links are the bundled world's.
    expect(await lookup(env, 4, 'Saltgrave Mineral Company', 'headquarters')).toBe('Saltgrave Mineral Company (company) — headquarters: Saltgrave');

    // Search reads the same world as lookup.
    await env.reset({ seed: 5, task: DIFF_TASK });
    const founded = (await env.step({ tool: 'lookup', params: { entity: 'Vantrel Glassworks', attribute: 'founded' } })).observation.split(': ')[1] ?? '';
    // Snippets are descriptions, but ranking reads the whole article: the redrawn year finds the company.
    const hit = (await env.step({ tool: 'search', params: { query: `founded ${founded}`, k: 1 } })).observation;

    expect(founded).toMatch(/^\d{4}$/);
    expect(hit).toContain('[company-vantrel-glassworks]');
    expect(defaultKnowledgeBase().lookup('Saltgrave Mineral Company', 'founded').text).toBe(fixed); // the bundled world is untouched
  });

  it('scores against the episode world: the expert solves it through the tools, the fixed world\'s answer fails', async () => {
    registerBuiltinEnvs();
    const env = make(TOOL_USE_RANDOMIZED_ENV_ID);
    const tasks = listToolTasks('heldout');
    let solved = 0;
    let canonicalRight = 0;
    for (const [i, task] of tasks.entries()) {
      const trajectory = await runEpisode(env, new ToolUseExpert(), { envId: TOOL_USE_RANDOMIZED_ENV_ID, task: task.id, seed: i });
      if (trajectory.outcome.success) solved++;
      const canonical = expectedAnswer(getToolTask(task.id));
      await env.reset({ seed: i, task: task.id });
      const end = await env.step({ tool: 'submit', params: { answer: formatExpected(canonical) } } satisfies Action);
      if (end.reward === 1) canonicalRight++;
    }
    expect(solved / tasks.length).toBeGreaterThanOrEqual(0.95);
    // Only string answers (regions, names, categories) survive randomisation.
    const strings = tasks.filter((t) => t.answerType === 'string').length;
    expect(canonicalRight).toBeLessThanOrEqual(strings + 2);
    expect(canonicalRight).toBeGreaterThanOrEqual(strings);
    await env.close();
  });
});
