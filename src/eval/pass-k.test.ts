import { describe, expect, it } from 'vitest';
import { expectClose } from '../core/stats/__fixtures__/expect-close.js';
import { evalResultOf } from './__fixtures__/results.js';
import { summarizePassK, taskOutcomes } from './pass-k.js';

// success = reward ≥ 0.5 in the fixture. Three trials of tasks a, b, c, in the order evaluate deals them.
const rewards = [1, 1, 0, /* trial 1 */ 1, 0, 0, /* trial 2 */ 1, 1, 1];
const tasks = ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c'];
const { episodes } = evalResultOf('x', rewards, tasks);

describe('taskOutcomes', () => {
  it('counts each task’s episodes and successes, in the order the tasks first ran', () => {
    expect(taskOutcomes([...episodes].reverse())).toEqual([
      { taskId: 'a', trials: 3, successes: 3 },
      { taskId: 'b', trials: 3, successes: 2 },
      { taskId: 'c', trials: 3, successes: 1 },
    ]);
  });
});

describe('summarizePassK', () => {
  it('gives pass^1..pass^k over tasks, hand-computed', () => {
    const curve = summarizePassK(episodes, 3, { confidence: 0.95, resamples: 500, seed: 1 });
    expect(curve.map((p) => p.k)).toEqual([1, 2, 3]);
    // pass^1 = (3/3 + 2/3 + 1/3) / 3 = 2/3, the success rate 6/9 (every task ran equally often).
    expectClose(curve[0]?.value as number, 2 / 3, 1e-14);
    // pass^2 = (1 + C(2,2)/C(3,2) + 0) / 3 = (1 + 1/3) / 3 = 4/9.
    expectClose(curve[1]?.value as number, 4 / 9, 1e-14);
    // pass^3 = (1 + 0 + 0) / 3 = 1/3.
    expectClose(curve[2]?.value as number, 1 / 3, 1e-14);
    for (const p of curve) expect([p.low <= p.value, p.value <= p.high]).toEqual([true, true]);
  });

  it('refuses k above a task’s trials, naming the task', () => {
    const uneven = evalResultOf('x', [1, 1, 0], ['a', 'b', 'a']).episodes;
    expect(() => summarizePassK(uneven, 2, { confidence: 0.95, resamples: 10, seed: 0 })).toThrow(/pass\^2: task b ran 1 time\(s\); every task needs at least 2/);
  });
});
