import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { evaluate } from './expression.js';
import { getMathTask, listMathTasks, MATH_TASKS_PER_LEVEL, mathTaskInfo } from './tasks.js';

describe('text-math tasks', () => {
  it('has a fixed number of tasks per split and level', () => {
    expect(listMathTasks('train')).toHaveLength(4 * MATH_TASKS_PER_LEVEL.train);
    expect(listMathTasks('heldout')).toHaveLength(4 * MATH_TASKS_PER_LEVEL.heldout);
    for (const level of [1, 2, 3, 4]) {
      expect(listMathTasks('heldout').filter((t) => t.level === level)).toHaveLength(MATH_TASKS_PER_LEVEL.heldout);
    }
  });

  it('keeps the splits disjoint, by id and by problem text', () => {
    const train = listMathTasks('train');
    const heldout = listMathTasks('heldout');
    const trainIds = new Set(train.map((t) => t.id));
    const trainText = new Set(train.map((t) => t.question));
    expect(heldout.some((t) => trainIds.has(t.id) || trainText.has(t.question))).toBe(false);
    expect(new Set([...train, ...heldout].map((t) => t.question)).size).toBe(train.length + heldout.length);
  });

  it('regenerates a task from its id', () => {
    const task = getMathTask('math-heldout-L3-00007');
    expect(task).toMatchObject({ id: 'math-heldout-L3-00007', split: 'heldout', level: 3 });
    expect(getMathTask(task.id)).toBe(task);
  });

  it('has exact answers that are integers or fractions, and word problems of several kinds', () => {
    for (const task of listMathTasks()) expect(() => evaluate(task.expr)).not.toThrow();
    const kinds = new Set(listMathTasks().filter((t) => t.level >= 3).map((t) => t.kind));
    expect(kinds).toEqual(
      new Set(['shopping-change', 'shopping-total', 'rate-time', 'rate-distance', 'sharing', 'percent-chain', 'fraction-remaining', 'recipe-scaling', 'percent-of-fraction', 'savings']),
    );
    expect(listMathTasks().some((t) => !evaluate(t.expr).isInteger())).toBe(true);
  });

  it('rejects malformed and out-of-range ids with a TaskError', () => {
    expect(() => getMathTask('math-train-L5-00000')).toThrow(TaskError);
    expect(() => getMathTask('math-heldout-L1-00025')).toThrow(/out of range/);
  });

  it('publishes no answer in the task info', () => {
    const task = getMathTask('math-train-L4-00003');
    const info = mathTaskInfo(task);
    expect(JSON.stringify(info)).not.toContain('expr');
    expect(Object.keys(info.metadata ?? {})).toEqual(['level', 'kind']);
  });
});
