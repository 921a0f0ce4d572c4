import { describe, expect, it } from 'vitest';
import { ChaosDriver, eventsDue } from './chaos.js';

describe('chaos pacing', () => {
  it('spreads the minimum over the iterations, all due before the last one', () => {
    const pace = { minEvents: 6, iterations: 5 };
    expect([0, 1, 2, 3, 4, 5].map((done) => eventsDue(pace, done))).toEqual([0, 2, 3, 5, 6, 6]);
    expect(eventsDue({ minEvents: 6, iterations: 1 }, 1)).toBe(0);
  });

  it('keeps up with a loop that runs ahead of its draws, and not without the pace', async () => {
    // A loop whose 5 iterations take 0.3 s each, against chaos drawn every 20 s: only the pace makes events happen.
    const run = async (paced: boolean): Promise<number> => {
      const t0 = Date.now();
      const iterationsDone = (): number => Math.min(5, Math.floor((Date.now() - t0) / 300));
      let n = 0;
      const driver = new ChaosDriver(1, { 'pause-resume': () => Promise.resolve(`event ${++n}`) }, [2_000, 20_000], t0, undefined, paced ? { minEvents: 6, iterations: 5, iterationsDone } : undefined);
      await driver.run(() => Date.now() - t0 > 5_000);
      return driver.happened;
    };
    const [paced, unpaced] = await Promise.all([run(true), run(false)]);
    expect(paced).toBeGreaterThanOrEqual(6);
    expect(unpaced).toBeLessThanOrEqual(2);
  }, 20_000);
});
