import { describe, expect, it } from 'vitest';
import { BEST, OPTIONS, REQUEST } from './__fixtures__/lisbon.js';
import type { Topic } from './client.js';
import { ADVISORY_SUCCESS_THRESHOLD, scoreRecommendation } from './reward.js';
import { solveTrip } from './solver.js';
import type { AdvisoryTask } from './tasks.js';

// The worked example of reward.ts and src/envs/README.md, on the hand-made Lisbon market.
const best = solveTrip(REQUEST, OPTIONS);
const task = { request: REQUEST, world: { flights: [...OPTIONS.flights], hotels: [...OPTIONS.hotels], activities: [...OPTIONS.activities] }, best } as AdvisoryTask;
const none: Topic[] = [];

describe('the advisory reward (worked example)', () => {
  it('scores the best plan 1: value 3 × 8.0 + 9.0 = 33.0 at $1,310 of $1,500', () => {
    expect(best).toEqual({ plan: BEST, cost: 1310, value: 33 });
    expect(scoreRecommendation(task, BEST, none)).toMatchObject({ reward: 1, success: true, info: { terms: { recommended: true, elicited: true, constraints: true, value: 1 }, plan: { cost: 1310, value: 33 } } });
  });

  it('scores a feasible but poorer plan by its value: the 6.5 hotel is worth 28.5, 28.5 / 33 = 0.8636, not a success', () => {
    const r = scoreRecommendation(task, { ...BEST, hotel: 'OK' }, none);
    expect(r).toMatchObject({ reward: 0.8636, success: false, info: { terms: { constraints: true, value: 0.8636 }, failed: [] } });
    expect(r.reward).toBeLessThan(ADVISORY_SUCCESS_THRESHOLD);
  });

  it('scores 0 for the best-rated plan over the budget ($1,610), for the best plan without asking, and for no plan', () => {
    expect(scoreRecommendation(task, { ...BEST, hotel: 'GREAT' }, none)).toMatchObject({ reward: 0, info: { terms: { constraints: false, value: 1 }, failed: ['budget'], plan: { cost: 1610, value: 37.5 } } });
    expect(scoreRecommendation(task, BEST, ['activities'])).toMatchObject({ reward: 0, info: { terms: { elicited: false, constraints: true, value: 1 }, missing_topics: ['activities'] } });
    expect(scoreRecommendation(task, undefined, none)).toMatchObject({ reward: 0, success: false, info: { terms: { recommended: false } } });
  });
});
