import { describe, expect, it } from 'vitest';
import { Rng } from '../core/rng.js';
import { stepSeed, taskStepSeed } from './usage.js';

describe('taskStepSeed', () => {
  it('replays a step of a task with the same seed, and draws other numbers on another task', () => {
    expect(taskStepSeed(7, 1555058867, 0, 'recall-train-01863')).toBe(taskStepSeed(7, 1555058867, 0, 'recall-train-01863'));
    const seeds = new Set<number>();
    for (let k = 0; k < 64; k++) seeds.add(taskStepSeed(7, 1555058867, 0, `recall-train-${String(k).padStart(5, '0')}`));
    expect(seeds.size).toBe(64);
    for (const s of seeds) expect(Number.isInteger(s) && s >= 0 && s < 2 ** 31).toBe(true);
    expect(taskStepSeed(7, 1555058867, 1, 'a')).not.toBe(taskStepSeed(7, 1555058867, 0, 'a'));
  });

  it('makes member g of 64 groups draw independent numbers where the episode seed alone repeats them', () => {
    // collect gives member g of every group one episode seed: the 7th draw of a step's stream is then the same
    // number on every task; with the task mixed in, about 1 in 100 of the 64 is below 0.01, as independent draws.
    const seventh = (seed: number): number => {
      const rng = new Rng(seed);
      for (let i = 0; i < 6; i++) rng.next();
      return rng.next();
    };
    const tasks = Array.from({ length: 64 }, (_, k) => `task-${k}`);
    expect(new Set(tasks.map(() => seventh(stepSeed(3, 99, 0)))).size).toBe(1);
    const draws = tasks.map((t) => seventh(taskStepSeed(3, 99, 0, t)));
    expect(new Set(draws).size).toBe(64);
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.15);
  });
});
