import { TaskError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { Split, TaskInfo } from '../../core/types.js';

/**
 * The task bank of `gymflow/recall-v0`: associative recall (the MQAR task of Arora et al., 2023, "Zoology", as a
 * one-step tool call). Each task lists one to {@link RECALL_MAX_PAIRS} name–number pairs and asks for one name's
 * number; a quarter of the tasks have each length, so the bank runs from copying the only number to choosing it
 * among four.
 * Tasks are regenerated deterministically from their id (`recall-heldout-00042`); the train and held-out splits
 * come from disjoint seed streams, and the held-out stream skips any problem whose text the training split has.
 */

/** Tasks in each split: the held-out split is large enough for paired tests of a few points (docs/trainer.md). */
export const RECALL_TASK_COUNTS: Readonly<Record<Split, number>> = { train: 4000, heldout: 400 };

/** Most pairs listed in a task. */
export const RECALL_MAX_PAIRS = 4;

/** The names pairs are made of: short words, several of which share a first letter or a sound. */
export const RECALL_NAMES: readonly string[] = [
  'ruby', 'jade', 'opal', 'onyx', 'pearl', 'amber', 'coral', 'topaz', 'agate', 'beryl', 'flint', 'slate',
  'cedar', 'maple', 'birch', 'aspen', 'hazel', 'rowan', 'alder', 'larch', 'cobalt', 'copper', 'nickel', 'silver',
];

/**
 * The numbers are single digits: a policy that guesses any digit is right one time in nine, one that copies a listed
 * number one time in the number of pairs, and sampling eight times finds the answer more often still. So a policy
 * early in training already earns some reward, which is what RL needs to start from.
 */
const NUMBER_RANGE: readonly [number, number] = [1, 9];

/** The domain (and domain profile) of these tasks. */
export const RECALL_DOMAIN = 'recall';

/** One task: its pairs and which one is asked. */
export interface RecallTask {
  id: string;
  split: Split;
  pairs: readonly (readonly [string, number])[];
  /** Index into `pairs` of the name asked about. */
  asked: number;
  question: string;
}

const ID_PATTERN = /^recall-(train|heldout)-(\d{5})$/;
const STREAM_BASE: Readonly<Record<Split, number>> = { train: 0x7ec0_0000, heldout: 0x4e1d_0000 };

/** The question of a task: the pairs, then the name asked about. */
export function recallQuestion(pairs: readonly (readonly [string, number])[], asked: number): string {
  // "Pairs:" first, so every listed name follows a space, as the asked name does: the same tokens in both places.
  // The number right after its name (no "="), so a head that looks one token back links them.
  const listed = pairs.map(([name, value]) => `${name} ${value}`).join(', ');
  return `Pairs: ${listed}. What is ${pairs[asked]?.[0] ?? ''}?`;
}

function draw(split: Split, index: number): Omit<RecallTask, 'id' | 'split'> {
  const rng = new Rng(STREAM_BASE[split] + index);
  const count = rng.int(1, RECALL_MAX_PAIRS);
  const names = rng.shuffle(RECALL_NAMES).slice(0, count);
  const values = new Set<number>();
  while (values.size < count) values.add(rng.int(NUMBER_RANGE[0], NUMBER_RANGE[1]));
  const pairs = names.map((name, i) => [name, [...values][i] as number] as const);
  const asked = rng.int(0, count - 1);
  return { pairs, asked, question: recallQuestion(pairs, asked) };
}

const cache = new Map<Split, RecallTask[]>();

function bank(split: Split): RecallTask[] {
  const cached = cache.get(split);
  if (cached) return cached;
  const taken = new Set(split === 'heldout' ? bank('train').map((t) => t.question) : []);
  const tasks: RecallTask[] = [];
  const count = RECALL_TASK_COUNTS[split];
  for (let draws = 0; tasks.length < count; draws++) {
    const problem = draw(split, draws);
    if (taken.has(problem.question)) continue;
    taken.add(problem.question);
    tasks.push({ id: `recall-${split}-${String(tasks.length).padStart(5, '0')}`, split, ...problem });
  }
  cache.set(split, tasks);
  return tasks;
}

/** Every task of a split (both splits when omitted). */
export function listRecallTasks(split?: Split): RecallTask[] {
  return split ? bank(split) : [...bank('train'), ...bank('heldout')];
}

/** The task with this id. Throws a {@link TaskError} for an id that is malformed or out of range. */
export function getRecallTask(id: string): RecallTask {
  const m = ID_PATTERN.exec(id);
  if (!m) throw new TaskError(`recall: unknown task id '${id}': expected recall-<train|heldout>-<5 digits>, e.g. 'recall-train-00017'`);
  const split = m[1] as Split;
  const task = bank(split)[Number(m[2])];
  if (!task) throw new TaskError(`recall: task id '${id}' is out of range: ${split} has ${RECALL_TASK_COUNTS[split]} tasks (0-${RECALL_TASK_COUNTS[split] - 1})`);
  return task;
}

/** The answer of a task: the asked name's number, as text. */
export function recallAnswer(task: RecallTask): string {
  return String(task.pairs[task.asked]?.[1]);
}

/** The public description of a task (never the answer); metadata `pairs` (how many are listed) and `position` (which one is asked). */
export function recallTaskInfo(task: RecallTask): TaskInfo {
  return { id: task.id, domain: RECALL_DOMAIN, instruction: task.question, split: task.split, metadata: { pairs: task.pairs.length, position: task.asked } };
}
