import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { getCatalogue, type Product } from './catalogue.js';
import { webshopReward } from './reward.js';
import {
  getWebshopTask,
  goalKey,
  isHeldOutProduct,
  listWebshopTasks,
  phrase,
  PHRASING_COUNT,
  targetProducts,
  WEBSHOP_TASK_COUNTS,
  webshopTaskInfo,
  type WebshopGoal,
} from './tasks.js';

const product = (asin: string): Product => getCatalogue().byAsin.get(asin) as Product;

describe('webshop tasks', () => {
  const train = listWebshopTasks('train');
  const heldout = listWebshopTasks('heldout');

  it('has 2,400 training and 300 held-out tasks with unique ids', () => {
    expect(train).toHaveLength(WEBSHOP_TASK_COUNTS.train);
    expect(heldout).toHaveLength(WEBSHOP_TASK_COUNTS.heldout);
    expect(new Set([...train, ...heldout].map((t) => t.id)).size).toBe(2700);
    expect(listWebshopTasks()).toHaveLength(2700);
  });

  it('targets held-out products no training instruction targets, and says nothing a training instruction says', () => {
    const trainTargets = new Set(train.map((t) => t.target));
    const heldoutTargets = new Set(heldout.map((t) => t.target));
    expect(heldoutTargets.size).toBe(300);
    expect(trainTargets.size).toBe(1200);
    for (const t of heldoutTargets) expect(trainTargets.has(t)).toBe(false);
    for (const t of heldout) expect(isHeldOutProduct(product(t.target))).toBe(true);
    const said = new Set(train.map((t) => t.instruction));
    const goals = new Set(train.map((t) => goalKey(t.goal)));
    for (const t of heldout) {
      expect(said.has(t.instruction), t.instruction).toBe(false);
      expect(goals.has(goalKey(t.goal)), t.instruction).toBe(false);
    }
    // Some held-out tasks had to redraw: the check above is not vacuous.
    expect(heldout.some((t) => (t.seed & 15) !== 0)).toBe(true);
    expect(new Set(targetProducts('heldout').slice(0, 50).map((p) => p.type)).size).toBe(50);
  });

  it('draws goals its target meets in full: 1–3 of its attributes, offered option values, a price limit above its price', () => {
    for (const t of [...train, ...heldout]) {
      const p = product(t.target);
      const g = t.goal;
      expect(g.category).toBe(p.category);
      expect(g.type).toBe(p.type);
      expect(g.attributes.length).toBeGreaterThanOrEqual(1);
      expect(g.attributes.length).toBeLessThanOrEqual(3);
      for (const a of g.attributes) expect(p.attributes).toContain(a);
      expect(g.options.length).toBeGreaterThanOrEqual(Math.min(1, p.options.length));
      for (const o of g.options) expect(p.options.find((x) => x.name === o.name)?.values).toContain(o.value);
      expect(g.priceLimitCents).toBeGreaterThan(p.priceCents);
      expect(g.priceLimitCents % 500).toBe(0);
      const selected = Object.fromEntries(g.options.map((o) => [o.name, o.value]));
      expect(webshopReward(p, selected, g).reward, t.id).toBe(1);
    }
  });

  it('phrases instructions in WebShop\'s several ways, each naming the type, attributes, options and limit', () => {
    for (const split of [train, heldout]) for (let k = 0; k < PHRASING_COUNT; k++) expect(split.some((t) => t.phrasing === k)).toBe(true);
    for (const t of [...train, ...heldout]) {
      expect(t.instruction).toContain(t.goal.type);
      for (const a of t.goal.attributes) expect(t.instruction).toContain(a);
      for (const o of t.goal.options) expect(t.instruction).toContain(o.value);
      expect(t.instruction).toMatch(/price lower than \d+\.00 dollars$/);
    }
    const goal: WebshopGoal = {
      category: 'beauty',
      type: 'hair extension',
      attributes: ['natural looking', 'heat resistant'],
      options: [{ name: 'color', value: 'blonde' }, { name: 'length', value: '20 inch' }],
      priceLimitCents: 4000,
    };
    expect(Array.from({ length: PHRASING_COUNT }, (_, k) => phrase(goal, k))).toEqual([
      'i need a hair extension which is natural looking and heat resistant, in blonde color and 20 inch length, and price lower than 40.00 dollars',
      'Find me natural looking and heat resistant hair extension with color: blonde, and length: 20 inch, and price lower than 40.00 dollars',
      'i am looking for natural looking and heat resistant hair extension in blonde color and 20 inch length, and price lower than 40.00 dollars',
      'i want to buy a hair extension which is natural looking and heat resistant, and its color should be blonde, and its length should be 20 inch, and price lower than 40.00 dollars',
      'i would like a blonde 20 inch hair extension that is natural looking and heat resistant, and price lower than 40.00 dollars',
    ]);
    const plural = { ...goal, type: 'yoga pants', attributes: ['high waist'], options: [{ name: 'color', value: 'olive green' }] };
    expect(phrase(plural, 0)).toBe('i need yoga pants which are high waist, in olive green color, and price lower than 40.00 dollars');
    expect(phrase({ ...goal, type: 'area rug', options: [] }, 3)).toBe('i want to buy an area rug which is natural looking and heat resistant, and price lower than 40.00 dollars');
  });

  it('regenerates a task from its id alone and refuses unknown ids', () => {
    const t = getWebshopTask('webshop-heldout-00017');
    expect(t).toBe(getWebshopTask('webshop-heldout-00017'));
    expect(t.target).toBe(targetProducts('heldout')[17]?.asin);
    expect(getWebshopTask('webshop-train-01217').target).toBe(targetProducts('train')[17]?.asin);
    expect(() => getWebshopTask('webshop-test-00001')).toThrow(TaskError);
    expect(() => getWebshopTask('webshop-heldout-00300')).toThrow(/out of range: heldout has 300 tasks/);
  });

  it('describes a task without naming its target', () => {
    const t = getWebshopTask('webshop-train-00003');
    const info = webshopTaskInfo(t);
    expect(info).toMatchObject({ id: t.id, domain: 'browser', split: 'train', instruction: t.instruction, metadata: { category: t.goal.category, productType: t.goal.type } });
    expect(JSON.stringify(info)).not.toContain(t.target);
    expect(JSON.stringify(info)).not.toContain(product(t.target).brand);
  });
});
