import { TaskError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { Split, TaskInfo } from '../../core/types.js';
import type { MathExpr } from './expression.js';
import { generateProblem, MATH_LEVELS, type MathLevel } from './problems.js';

/**
 * The task bank of `gymflow/text-math-v0`: a fixed number of problems per split and level, each
 * regenerated deterministically from its id (`math-train-L2-00017`).
 *
 * Train and held-out problems come from disjoint seed streams, and the held-out stream also skips any
 * problem whose text already appears in the training split, so the splits never share a problem.
 */

/** Problems per level in each split (4 levels: 200 train, 100 held-out). */
export const MATH_TASKS_PER_LEVEL: Readonly<Record<Split, number>> = { train: 50, heldout: 25 };

/** The domain profile these tasks belong to. */
export const MATH_DOMAIN = 'math';

/** One task: its id, where it belongs, and the problem with its structured form. */
export interface MathTask {
  id: string;
  split: Split;
  level: MathLevel;
  /** Template family (`arithmetic`, `precedence`, `shopping-change`, …). */
  kind: string;
  question: string;
  /** The structured form; the gold answer is `evaluate(expr)`. Never shown to the agent. */
  expr: MathExpr;
}

const ID_PATTERN = /^math-(train|heldout)-L([1-4])-(\d{5})$/;

// Disjoint streams: the split decides the high bits of every problem's seed.
const STREAM_BASE: Readonly<Record<Split, number>> = { train: 0x3a710000, heldout: 0x5e4d0000 };

/** The id of the `index`-th problem of `level` in `split`. */
export function mathTaskId(split: Split, level: MathLevel, index: number): string {
  return `math-${split}-L${level}-${String(index).padStart(5, '0')}`;
}

const cache = new Map<string, MathTask[]>();

function bank(split: Split, level: MathLevel): MathTask[] {
  const key = `${split}:${level}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const taken = new Set(split === 'heldout' ? bank('train', level).map((t) => t.question) : []);
  const tasks: MathTask[] = [];
  const count = MATH_TASKS_PER_LEVEL[split];
  for (let draw = 0; tasks.length < count; draw++) {
    if (draw > count * 50) throw new RangeError(`text-math: could not draw ${count} distinct level-${level} problems`);
    const rng = new Rng(STREAM_BASE[split] + level * 0x1000 + draw);
    const problem = generateProblem(level, rng);
    if (taken.has(problem.question)) continue;
    taken.add(problem.question);
    tasks.push({ id: mathTaskId(split, level, tasks.length), split, level, ...problem });
  }
  cache.set(key, tasks);
  return tasks;
}

/** Every task of a split (both splits when omitted), level by level. */
export function listMathTasks(split?: Split): MathTask[] {
  const splits: Split[] = split ? [split] : ['train', 'heldout'];
  return splits.flatMap((s) => MATH_LEVELS.flatMap((level) => bank(s, level)));
}

/** The task with this id. Throws a {@link TaskError} for an id that is malformed or out of range. */
export function getMathTask(id: string): MathTask {
  const m = ID_PATTERN.exec(id);
  if (!m) {
    throw new TaskError(`text-math: unknown task id '${id}': expected math-<train|heldout>-L<1-4>-<5 digits>, e.g. 'math-train-L2-00017'`);
  }
  const split = m[1] as Split;
  const level = Number(m[2]) as MathLevel;
  const index = Number(m[3]);
  const task = bank(split, level)[index];
  if (!task) {
    throw new TaskError(`text-math: task id '${id}' is out of range: ${split} has ${MATH_TASKS_PER_LEVEL[split]} tasks per level (indices 0-${MATH_TASKS_PER_LEVEL[split] - 1})`);
  }
  return task;
}

/** The public description of a task: id, instruction and level, never the answer. */
export function mathTaskInfo(task: MathTask): TaskInfo {
  return {
    id: task.id,
    domain: MATH_DOMAIN,
    instruction: task.question,
    split: task.split,
    metadata: { level: task.level, kind: task.kind },
  };
}
