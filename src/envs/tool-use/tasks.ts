import { TaskError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { Split, TaskInfo } from '../../core/types.js';
import { normalizeAnswer, type ExpectedAnswer } from './answer.js';
import { defaultKnowledgeBase, type KnowledgeBase } from './knowledge-base.js';
import { ATTRIBUTES, KIND_ATTRIBUTES, type EntityKind, type WorldEntity } from './world.js';

/**
 * The task bank of `gymflow/tool-use-v0`, generated deterministically from the knowledge base: every
 * candidate question of each kind is enumerated, shuffled with a fixed seed, and dealt into held-out
 * and training slices, so the splits never share a question. Ids are `tool-train-00042` /
 * `tool-heldout-00007`.
 */

/** The domain profile these tasks belong to. */
export const TOOL_USE_DOMAIN = 'tool-use';

/** Where a value starts: a named entity, or one to be found by searching for its description. */
export type EntityRef = { entity: string } | { clue: string; kind: EntityKind };

/** A value to find: `attribute` of the entity (after following the `via` link attribute, if any). */
export interface ValueRef {
  from: EntityRef;
  /** An entity-valued attribute to follow first (`headquarters`, `founder`, `maker`, `birthplace`). */
  via?: string;
  attribute: string;
}

/** What to do with the values found. */
export type TaskOp =
  | { op: 'value' }
  | { op: 'sum' }
  | { op: 'diff' }
  | { op: 'discount'; percent: number; quantity: number };

/** The task families. */
export type ToolTaskKind = 'lookup' | 'hop' | 'diff-years' | 'sum' | 'discount' | 'search-lookup' | 'search-compute';

/** A task's structured form: which values to find and how to combine them. */
export interface ToolTaskSpec {
  kind: ToolTaskKind;
  refs: ValueRef[];
  op: TaskOp;
}

/** A task of the bank. */
export interface ToolTask extends ToolTaskSpec {
  id: string;
  split: Split;
  question: string;
  answerType: 'number' | 'string';
  /**
   * Whether some training task has the same expected answer (always true on the training split). A
   * held-out question with a new answer can only be solved by reading and copying the tools' results; one
   * whose answer the training split also gives can be solved by recall too. 59 of the 74 held-out answers
   * are training answers.
   */
  answerInTrain: boolean;
}

/**
 * How many tasks of each kind go into each split: the core bank (185 train, 74 held-out). The training split
 * then grows with further candidates of each kind up to {@link TRAIN_TASKS_PER_KIND} (see `buildToolTaskBank`).
 */
export const TOOL_TASK_COUNTS: Readonly<Record<ToolTaskKind, Readonly<Record<Split, number>>>> = {
  lookup: { train: 40, heldout: 16 },
  hop: { train: 25, heldout: 10 },
  'diff-years': { train: 25, heldout: 10 },
  sum: { train: 25, heldout: 10 },
  discount: { train: 20, heldout: 8 },
  'search-lookup': { train: 25, heldout: 10 },
  'search-compute': { train: 25, heldout: 10 },
};

/**
 * The training split's size per kind once extended with further candidates (fewer where a kind has fewer):
 * a tiny policy trained from scratch must learn to copy names and numbers, which takes many distinct
 * examples, not many epochs over a few.
 */
export const TRAIN_TASKS_PER_KIND = 250;

const KINDS = Object.keys(TOOL_TASK_COUNTS) as ToolTaskKind[];
const BANK_SEED = 0x70013;
const DISCOUNTS = [10, 15, 20, 25, 30, 40];
const QUANTITIES = [1, 2, 3, 5];
const SUMMABLE: Readonly<Partial<Record<EntityKind, string>>> = { city: 'population', company: 'employees', product: 'price' };
const YEAR_OF: Readonly<Record<EntityKind, string>> = { city: 'founded', company: 'founded', product: 'launched', person: 'born' };

// ---------------------------------------------------------------------------------------------------
// Wording

function entityPhrase(from: EntityRef): string {
  return 'entity' in from ? from.entity : `the ${from.kind} described as "${from.clue}"`;
}

const VIA_PHRASE: Readonly<Record<string, (subject: string) => string>> = {
  headquarters: (s) => `the city where ${s} is headquartered`,
  founder: (s) => `the founder of ${s}`,
  maker: (s) => `the company that makes ${s}`,
  birthplace: (s) => `the city where ${s} was born`,
};

/** How a question names the entity a value reference ends at (`the founder of Brightwell Dynamics`). */
export function subjectPhrase(ref: ValueRef): string {
  const base = entityPhrase(ref.from);
  if (ref.via === undefined) return base;
  const phrase = VIA_PHRASE[ref.via];
  if (!phrase) throw new TaskError(`tool-use: no wording for link attribute '${ref.via}'`);
  return phrase(base);
}

const VALUE_QUESTION: Readonly<Record<string, (s: string) => string>> = {
  region: (s) => `In which region is ${s}?`,
  population: (s) => `What is the population of ${s}?`,
  founded: (s) => `In what year was ${s} founded?`,
  area_km2: (s) => `What is the area of ${s} in square kilometres?`,
  elevation_m: (s) => `What is the elevation of ${s} in metres?`,
  industry: (s) => `What industry is ${s} in?`,
  headquarters: (s) => `In which city is ${s} headquartered?`,
  employees: (s) => `How many employees does ${s} have?`,
  founder: (s) => `Who founded ${s}?`,
  maker: (s) => `Which company makes ${s}?`,
  category: (s) => `What product category does ${s} belong to?`,
  price: (s) => `What is the price of ${s} in crowns?`,
  launched: (s) => `In what year was ${s} launched?`,
  weight_kg: (s) => `How much does ${s} weigh in kilograms?`,
  occupation: (s) => `What is the occupation of ${s}?`,
  born: (s) => `In what year was ${s} born?`,
  birthplace: (s) => `In which city was ${s} born?`,
};

const YEAR_EVENT: Readonly<Record<string, (s: string) => string>> = {
  founded: (s) => `the founding of ${s}`,
  launched: (s) => `the launch of ${s}`,
  born: (s) => `the birth of ${s}`,
};

const SUM_NOUN: Readonly<Record<string, string>> = {
  population: 'What is the combined population of',
  employees: 'What is the combined number of employees of',
  price: 'What is the total price in crowns of one',
};

function phrase<T>(table: Readonly<Record<string, T>>, key: string, what: string): T {
  const value = table[key];
  if (value === undefined) throw new TaskError(`tool-use: no ${what} wording for attribute '${key}'`);
  return value;
}

/** The question text of a task spec, ending with the expected answer format. */
export function renderQuestion(spec: ToolTaskSpec): string {
  const [a, b] = spec.refs;
  if (!a) throw new TaskError('tool-use: a task needs at least one value reference');
  const numeric = answerType(spec) === 'number';
  const hint = numeric ? 'Answer with a number.' : 'Answer with a name or short phrase.';
  switch (spec.op.op) {
    case 'value':
      return `${phrase(VALUE_QUESTION, a.attribute, 'question')(subjectPhrase(a))} ${hint}`;
    case 'sum': {
      if (!b) throw new TaskError('tool-use: a sum needs two value references');
      const one = a.attribute === 'price' ? ' and one ' : ' and ';
      return `${phrase(SUM_NOUN, a.attribute, 'sum')} ${subjectPhrase(a)}${one}${subjectPhrase(b)}? ${hint}`;
    }
    case 'diff': {
      if (!b) throw new TaskError('tool-use: a difference needs two value references');
      const ea = phrase(YEAR_EVENT, a.attribute, 'event')(subjectPhrase(a));
      const eb = phrase(YEAR_EVENT, b.attribute, 'event')(subjectPhrase(b));
      return `How many years passed between ${ea} and ${eb}? ${hint}`;
    }
    case 'discount': {
      const { percent, quantity } = spec.op;
      const items = quantity === 1 ? `one ${subjectPhrase(a)}` : `${quantity} units of ${subjectPhrase(a)}`;
      return `A shop sells ${items} at ${percent}% off the listed price. What is the total cost in crowns, rounded to 2 decimal places? ${hint}`;
    }
  }
}

/** Whether a task's answer is a number or a string. */
export function answerType(spec: ToolTaskSpec): 'number' | 'string' {
  if (spec.op.op !== 'value') return 'number';
  const attribute = spec.refs[0]?.attribute ?? '';
  const type = ATTRIBUTES[attribute]?.type;
  return type === 'number' || type === 'year' ? 'number' : 'string';
}

// ---------------------------------------------------------------------------------------------------
// Gold answers

function resolveEntity(kb: KnowledgeBase, from: EntityRef): WorldEntity {
  const entity = 'entity' in from ? kb.get(from.entity) : kb.list(from.kind).find((e) => e.clue === from.clue);
  if (!entity) throw new TaskError(`tool-use: task refers to an unknown entity ${JSON.stringify(from)}`);
  return entity;
}

function resolveValue(kb: KnowledgeBase, ref: ValueRef): number | string {
  let entity = resolveEntity(kb, ref.from);
  if (ref.via !== undefined) entity = resolveEntity(kb, { entity: String(kb.value(entity.name, ref.via)) });
  return kb.value(entity.name, ref.attribute);
}

/** The expected answer of a task, computed from the knowledge base (never stored). */
export function expectedAnswer(spec: ToolTaskSpec, kb: KnowledgeBase = defaultKnowledgeBase()): ExpectedAnswer {
  const values = spec.refs.map((r) => resolveValue(kb, r));
  const [a, b] = values;
  if (spec.op.op === 'value') {
    return typeof a === 'number' ? { type: 'number', value: a } : { type: 'string', value: String(a) };
  }
  const x = Number(a);
  const y = Number(b);
  switch (spec.op.op) {
    case 'sum':
      return { type: 'number', value: x + y };
    case 'diff':
      return { type: 'number', value: Math.abs(x - y) };
    case 'discount':
      return { type: 'number', value: (x * spec.op.quantity * (100 - spec.op.percent)) / 100 };
  }
}

// ---------------------------------------------------------------------------------------------------
// Candidates and the bank

function pairs<T>(items: readonly T[]): [T, T][] {
  const out: [T, T][] = [];
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) out.push([items[i] as T, items[j] as T]);
  return out;
}

function named(e: WorldEntity): EntityRef {
  return { entity: e.name };
}

function clued(e: WorldEntity): EntityRef {
  return { clue: e.clue, kind: e.kind };
}

function candidates(kind: ToolTaskKind, kb: KnowledgeBase): ToolTaskSpec[] {
  const all = kb.list();
  const out: ToolTaskSpec[] = [];
  const value: TaskOp = { op: 'value' };
  switch (kind) {
    case 'lookup':
    case 'search-lookup':
      for (const e of all) {
        for (const attribute of KIND_ATTRIBUTES[e.kind]) {
          // A description that already states the answer ("a merchant who…") makes no question.
          if (kind === 'search-lookup' && e.clue.toLowerCase().includes(String(e.attributes[attribute]).toLowerCase())) continue;
          out.push({ kind, refs: [{ from: kind === 'lookup' ? named(e) : clued(e), attribute }], op: value });
        }
      }
      break;
    case 'hop':
      for (const e of all) {
        for (const via of KIND_ATTRIBUTES[e.kind]) {
          const target = ATTRIBUTES[via]?.target;
          if (!target) continue;
          for (const attribute of KIND_ATTRIBUTES[target]) out.push({ kind, refs: [{ from: named(e), via, attribute }], op: value });
        }
      }
      break;
    case 'diff-years': {
      const diff: TaskOp = { op: 'diff' };
      for (const k of ['city', 'company', 'product', 'person'] as const) {
        const year = YEAR_OF[k];
        for (const [x, y] of pairs(kb.list(k))) {
          if (x.attributes[year] === y.attributes[year]) continue;
          out.push({ kind, refs: [{ from: named(x), attribute: year }, { from: named(y), attribute: year }], op: diff });
        }
      }
      // Two hops: a founder's birth vs the founding; a maker's founding vs the launch.
      for (const c of kb.list('company')) {
        out.push({ kind, refs: [{ from: named(c), via: 'founder', attribute: 'born' }, { from: named(c), attribute: 'founded' }], op: diff });
      }
      for (const p of kb.list('product')) {
        out.push({ kind, refs: [{ from: named(p), via: 'maker', attribute: 'founded' }, { from: named(p), attribute: 'launched' }], op: diff });
      }
      break;
    }
    case 'sum':
      for (const [k, attribute] of Object.entries(SUMMABLE) as [EntityKind, string][]) {
        for (const [x, y] of pairs(kb.list(k))) {
          out.push({ kind, refs: [{ from: named(x), attribute }, { from: named(y), attribute }], op: { op: 'sum' } });
        }
      }
      break;
    case 'discount':
      for (const p of kb.list('product')) {
        for (const percent of DISCOUNTS) {
          for (const quantity of QUANTITIES) {
            out.push({ kind, refs: [{ from: named(p), attribute: 'price' }], op: { op: 'discount', percent, quantity } });
          }
        }
      }
      break;
    case 'search-compute':
      for (const e of all) {
        const others = kb.list(e.kind).filter((o) => o.name !== e.name);
        const sumAttr = SUMMABLE[e.kind];
        const year = YEAR_OF[e.kind];
        for (const o of others) {
          if (sumAttr && e.kind !== 'product') {
            out.push({ kind, refs: [{ from: clued(e), attribute: sumAttr }, { from: named(o), attribute: sumAttr }], op: { op: 'sum' } });
          }
          if (e.attributes[year] !== o.attributes[year]) {
            out.push({ kind, refs: [{ from: clued(e), attribute: year }, { from: named(o), attribute: year }], op: { op: 'diff' } });
          }
        }
        if (e.kind === 'product') {
          for (const percent of DISCOUNTS) {
            out.push({ kind, refs: [{ from: clued(e), attribute: 'price' }], op: { op: 'discount', percent, quantity: 2 } });
          }
        }
      }
      break;
  }
  return out;
}

/**
 * How many of a kind's `pool` shuffled candidates go to the held-out split, the core training split and the
 * training split's extension (up to {@link TRAIN_TASKS_PER_KIND}, fewer where the pool has fewer).
 *
 * @throws TaskError when the pool cannot fill the core bank's slots.
 */
function dealSizes(kind: ToolTaskKind, pool: number): { heldout: number; train: number; extra: number } {
  const { train, heldout } = TOOL_TASK_COUNTS[kind];
  if (pool < train + heldout) throw new TaskError(`tool-use: only ${pool} candidate '${kind}' tasks for ${train + heldout} slots`);
  return { heldout, train, extra: Math.max(0, Math.min(pool, heldout + Math.max(train, TRAIN_TASKS_PER_KIND)) - heldout - train) };
}

/** Builds the bank from a knowledge base (exported for tests; the env uses the cached default). */
export function buildToolTaskBank(kb: KnowledgeBase = defaultKnowledgeBase()): Record<Split, ToolTask[]> {
  const dealt: Record<Split | 'extra', ToolTaskSpec[]> = { train: [], heldout: [], extra: [] };
  KINDS.forEach((kind, k) => {
    const pool = new Rng(BANK_SEED + k).shuffle(candidates(kind, kb));
    const { heldout, train, extra } = dealSizes(kind, pool.length);
    // Held-out first, then training, from one shuffled pool: no candidate lands in both.
    dealt.heldout.push(...pool.slice(0, heldout));
    dealt.train.push(...pool.slice(heldout, heldout + train));
    dealt.extra.push(...pool.slice(heldout + train, heldout + train + extra));
  });
  // Ids are positions: the core tasks keep theirs (0–184), the extension follows them.
  const ordered = (specs: ToolTaskSpec[], seed: number): ToolTaskSpec[] => new Rng(BANK_SEED + seed).shuffle(specs);
  // Numbers to the cent (the answer check's absolute tolerance), names as the check normalises them.
  const answerKey = (spec: ToolTaskSpec): string => {
    const a = expectedAnswer(spec, kb);
    return a.type === 'number' ? `n:${Math.round(a.value * 100)}` : `s:${normalizeAnswer(a.value)}`;
  };
  const trainAnswers = new Set([...dealt.train, ...dealt.extra].map(answerKey));
  const finish = (split: Split, specs: ToolTaskSpec[]): ToolTask[] =>
    specs.map((spec, i) => ({
      ...spec,
      id: `tool-${split}-${String(i).padStart(5, '0')}`,
      split,
      question: renderQuestion(spec),
      answerType: answerType(spec),
      answerInTrain: split === 'train' || trainAnswers.has(answerKey(spec)),
    }));
  return {
    train: finish('train', [...ordered(dealt.train, 100), ...ordered(dealt.extra, 300)]),
    heldout: finish('heldout', ordered(dealt.heldout, 200)),
  };
}

let bank: Record<Split, ToolTask[]> | undefined;
let byId: Map<string, ToolTask> | undefined;

/**
 * How many tasks {@link listToolTasks} returns for a split (both when omitted), from the candidates' counts
 * alone: the bank's questions and answers are not built (`gymflow envs` lists counts).
 */
export function countToolTasks(split?: Split, kb: KnowledgeBase = defaultKnowledgeBase()): number {
  let counts = kb === defaultKnowledgeBase() ? defaultCounts : undefined;
  if (counts === undefined) {
    counts = { train: 0, heldout: 0 };
    for (const kind of KINDS) {
      const sizes = dealSizes(kind, candidates(kind, kb).length);
      counts.train += sizes.train + sizes.extra;
      counts.heldout += sizes.heldout;
    }
    // Once per process for the bundled world: `gymflow envs` asks every tool-use variant for both splits.
    if (kb === defaultKnowledgeBase()) defaultCounts = counts;
  }
  return split === 'train' ? counts.train : split === 'heldout' ? counts.heldout : counts.train + counts.heldout;
}

let defaultCounts: Record<Split, number> | undefined;

/** Every task of a split (both when omitted). */
export function listToolTasks(split?: Split): ToolTask[] {
  bank ??= buildToolTaskBank();
  return split ? bank[split] : [...bank.train, ...bank.heldout];
}

/** The task with this id; throws a {@link TaskError} when there is none. */
export function getToolTask(id: string): ToolTask {
  byId ??= new Map(listToolTasks().map((t) => [t.id, t]));
  const task = byId.get(id);
  if (!task) {
    const counts = `train: tool-train-00000…${String(listToolTasks('train').length - 1).padStart(5, '0')}, heldout: tool-heldout-00000…${String(listToolTasks('heldout').length - 1).padStart(5, '0')}`;
    throw new TaskError(`tool-use: unknown task id '${id}' (${counts})`);
  }
  return task;
}

/** The public description of a task: no answer, no hidden entity. */
export function toolTaskInfo(task: ToolTask): TaskInfo {
  return {
    id: task.id,
    domain: TOOL_USE_DOMAIN,
    instruction: task.question,
    split: task.split,
    metadata: { kind: task.kind, answerType: task.answerType, answerInTrain: task.answerInTrain },
  };
}
