import { TaskError } from '../../core/errors.js';
import type { Split } from '../../core/types.js';

/** The tasks of a generated env, addressed by id (`NAME-<split>-<5 digits>`), each generated once on first use. */
export interface IndexedTaskBank<T> {
  /** The id of the `index`-th task of `split`. */
  id(split: Split, index: number): string;
  /** The task with this id. Throws a {@link TaskError} for an id that is malformed or out of range. */
  get(id: string): T;
  /** Every task of a split (both splits when omitted), in index order. */
  list(split?: Split): T[];
}

/**
 * A bank of `counts[split]` tasks per split named `name` (`household-train-00042`): `generate(split, index)` makes
 * a task from its id's parts alone, so a task is the same in every process.
 */
export function indexedTaskBank<T>(name: string, counts: Readonly<Record<Split, number>>, generate: (split: Split, index: number) => T): IndexedTaskBank<T> {
  const pattern = new RegExp(`^${name}-(train|heldout)-(\\d{5})$`);
  const cache = new Map<string, T>();
  const id = (split: Split, index: number): string => `${name}-${split}-${String(index).padStart(5, '0')}`;
  const get = (taskId: string): T => {
    const cached = cache.get(taskId);
    if (cached) return cached;
    const m = pattern.exec(taskId);
    if (!m) throw new TaskError(`${name}: unknown task id '${taskId}': expected ${name}-<train|heldout>-<5 digits>, e.g. '${name}-train-00042'`);
    const split = m[1] as Split;
    const index = Number(m[2]);
    const count = counts[split];
    if (index >= count) throw new TaskError(`${name}: task id '${taskId}' is out of range: ${split} has ${count} tasks (indices 0-${count - 1})`);
    const task = generate(split, index);
    cache.set(taskId, task);
    return task;
  };
  const list = (split?: Split): T[] => {
    const splits: Split[] = split ? [split] : ['train', 'heldout'];
    return splits.flatMap((s) => Array.from({ length: counts[s] }, (_, i) => get(id(s, i))));
  };
  return { id, get, list };
}
