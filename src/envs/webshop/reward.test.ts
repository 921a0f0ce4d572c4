import { describe, expect, it } from 'vitest';
import { getCatalogue, type Product } from './catalogue.js';
import { typeReward, webshopReward } from './reward.js';
import type { WebshopGoal } from './tasks.js';

/** The worked example of the module documentation and src/envs/README.md. */
const goal: WebshopGoal = {
  category: 'beauty',
  type: 'hair extension',
  attributes: ['natural looking', 'heat resistant'],
  options: [{ name: 'color', value: 'blonde' }, { name: 'length', value: '20 inch' }],
  priceLimitCents: 4000,
};
const extension = { category: 'beauty', title: 'Lumora Natural Looking Hair Extension - for Women', attributes: ['natural looking', 'clip in', 'straight'], priceCents: 3299 };
const full = { ...extension, attributes: ['natural looking', 'heat resistant', 'clip in'] };
const all = { color: 'blonde', length: '20 inch' };

describe('webshop reward (WebShop, Yao et al. 2022, §3)', () => {
  it('computes the worked example: one attribute, one option and the price of 2 + 2 + 1', () => {
    const r = webshopReward(extension, { color: 'blonde', length: '18 inch' }, goal);
    expect(r).toEqual({ reward: 3 / 5, type: { rType: 1, sameCategory: true, titleScore: 1 }, attributes: { matched: 1, total: 2 }, options: { matched: 1, total: 2 }, priceOk: true });
    const shampoo = { category: 'beauty', title: 'Velora Shampoo for Dry Hair', attributes: ['for dry hair'], priceCents: 999 };
    expect(webshopReward(shampoo, {}, goal).reward).toBeCloseTo(0.5 * (1 / 5), 12);
  });

  it('is 1 for a full match only', () => {
    expect(webshopReward(full, all, goal).reward).toBe(1);
    expect(webshopReward(full, { color: 'blonde' }, goal).reward).toBeLessThan(1);
    expect(webshopReward({ ...full, priceCents: 4001 }, all, goal).reward).toBeLessThan(1);
    expect(webshopReward({ ...full, category: 'pets' }, all, goal).reward).toBeLessThan(1);
  });

  it('counts the goal\'s attributes the product has, and only those', () => {
    const with0 = webshopReward({ ...full, attributes: ['clip in'] }, all, goal);
    const with1 = webshopReward({ ...full, attributes: ['heat resistant'] }, all, goal);
    const with2 = webshopReward(full, all, goal);
    expect([with0, with1, with2].map((r) => r.attributes)).toEqual([{ matched: 0, total: 2 }, { matched: 1, total: 2 }, { matched: 2, total: 2 }]);
    expect([with0, with1, with2].map((r) => r.reward)).toEqual([3 / 5, 4 / 5, 1]);
    // An attribute mentioned in the title but not the product's does not count.
    expect(webshopReward({ ...full, title: 'Heat Resistant Hair Extension', attributes: ['natural looking'] }, all, goal).attributes.matched).toBe(1);
  });

  it('counts the options selected with the goal\'s value; unselected or other values do not match', () => {
    expect(webshopReward(full, {}, goal).options).toEqual({ matched: 0, total: 2 });
    expect(webshopReward(full, { color: 'black', length: '20 inch' }, goal).options).toEqual({ matched: 1, total: 2 });
    expect(webshopReward(full, { colour: 'blonde', length: '20 inch' }, goal).options).toEqual({ matched: 1, total: 2 });
    expect(webshopReward(full, all, goal).options).toEqual({ matched: 2, total: 2 });
    expect(webshopReward(full, {}, goal).reward).toBe(3 / 5);
  });

  it('adds 1 for a price at or under the limit', () => {
    expect(webshopReward({ ...full, priceCents: 4000 }, all, goal)).toMatchObject({ priceOk: true, reward: 1 });
    expect(webshopReward({ ...full, priceCents: 4001 }, all, goal)).toMatchObject({ priceOk: false, reward: 4 / 5 });
  });

  it('multiplies by r_type: 1 same department and type, 0.5 same department or the type elsewhere, 0.1 otherwise', () => {
    expect(typeReward(full, goal)).toEqual({ rType: 1, sameCategory: true, titleScore: 1 });
    expect(typeReward({ category: 'beauty', title: 'Velora Shampoo for Dry Hair' }, goal)).toEqual({ rType: 0.5, sameCategory: true, titleScore: 0.5 });
    expect(typeReward({ category: 'beauty', title: 'Velora Lipstick' }, goal)).toEqual({ rType: 0.5, sameCategory: true, titleScore: 0 });
    expect(typeReward({ category: 'pets', title: 'Velora Pet Shampoo' }, { category: 'beauty', type: 'shampoo' })).toEqual({ rType: 0.5, sameCategory: false, titleScore: 1 });
    expect(typeReward({ category: 'sports', title: 'Velora Yoga Mat' }, { category: 'clothing', type: 'yoga pants' })).toEqual({ rType: 0.1, sameCategory: false, titleScore: 0.5 });
    expect(webshopReward({ ...full, category: 'pets', title: 'Velora Dog Bed' }, all, goal).reward).toBeCloseTo(0.1, 12);
    expect(webshopReward({ ...full, title: 'Velora Lipstick' }, all, goal).reward).toBe(0.5);
  });

  it('scores products of the catalogue by the same rule', () => {
    const products = getCatalogue().products;
    const hair = products.find((p) => p.type === 'hair extension') as Product;
    const g: WebshopGoal = { category: 'beauty', type: 'hair extension', attributes: [hair.attributes[0] as string], options: [], priceLimitCents: hair.priceCents };
    expect(webshopReward(hair, {}, g).reward).toBe(1);
    const rug = products.find((p) => p.type === 'area rug') as Product;
    expect(webshopReward(rug, {}, g).type.rType).toBe(0.1);
  });
});
