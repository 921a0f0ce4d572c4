import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import type { Split } from '../../core/types.js';
import { indexedTaskBank } from './task-bank.js';

describe('indexedTaskBank', () => {
  const made: string[] = [];
  const bank = indexedTaskBank('demo', { train: 3, heldout: 1 }, (split: Split, index: number) => {
    made.push(`${split}/${index}`);
    return { split, index };
  });

  it('names, generates once and lists tasks by split', () => {
    expect(bank.id('train', 2)).toBe('demo-train-00002');
    expect(bank.get('demo-train-00002')).toBe(bank.get('demo-train-00002'));
    expect(made).toEqual(['train/2']);
    expect(bank.list('heldout')).toEqual([{ split: 'heldout', index: 0 }]);
    expect(bank.list().map((t) => bank.id(t.split, t.index))).toEqual(['demo-train-00000', 'demo-train-00001', 'demo-train-00002', 'demo-heldout-00000']);
  });

  it('refuses a malformed or out-of-range id, naming what it expected', () => {
    expect(() => bank.get('demo-test-00001')).toThrow(new TaskError("demo: unknown task id 'demo-test-00001': expected demo-<train|heldout>-<5 digits>, e.g. 'demo-train-00042'"));
    expect(() => bank.get('demo-heldout-00001')).toThrow("demo: task id 'demo-heldout-00001' is out of range: heldout has 1 tasks (indices 0-0)");
  });
});
