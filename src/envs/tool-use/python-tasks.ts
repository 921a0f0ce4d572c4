import { TaskError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import type { Split } from '../../core/types.js';
import { normalizeAnswer, type ExpectedAnswer } from './answer.js';
import { COLLECTIONS, extendedValue } from './extended-lookup.js';
import { defaultKnowledgeBase, type KnowledgeBase } from './knowledge-base.js';
import { subjectPhrase, TRAIN_TASKS_PER_KIND, type ValueRef } from './tasks.js';
import type { AttributeValue, EntityKind, WorldEntity } from './world.js';
import { DATE_ATTRIBUTES, dayNumber, weekdayName } from './world-dates.js';

/**
 * The task kinds of `gymflow/tool-use-python-v0` that want the `python` tool, generated like the base bank
 * (`tasks.ts`): every candidate of a kind is enumerated, shuffled with a fixed seed and dealt into held-out and
 * training slices. Ids are their own (`tool-python-train-00042`), so the base bank's ids and questions stay.
 *
 * - `table-aggregate`: a sum, mean, median, range or count over a table `lookup` returns (`cities`, …), filtered by
 *   a column, a threshold, or a joined table (companies headquartered in a region's cities);
 * - `table-rank`: which row ranks k-th (k ≤ 3) by a column, within such a filter;
 * - `date-diff`: days between two dates (`birth_date`, `founding_date`, `launch_date`), through links too;
 * - `date-weekday`: the weekday of such a date;
 * - `string-count`: how often a letter occurs in a looked-up name or phrase, or how many letters it has;
 * - `string-reverse`: a looked-up name or phrase spelled backwards.
 */

/** The python task families. */
export type PythonTaskKind = 'table-aggregate' | 'table-rank' | 'date-diff' | 'date-weekday' | 'string-count' | 'string-reverse';

/** Held-out tasks per kind; the rest of a kind's candidates (up to {@link TRAIN_TASKS_PER_KIND}) train. */
export const PYTHON_HELDOUT_PER_KIND = 8;

/** Which rows a table question is about: a column (of the row, or of the entity a link column names) against a value. */
export interface RowFilter {
  /** A link column (`headquarters`, `birthplace`) whose entity's `attribute` is compared. */
  via?: string;
  attribute: string;
  op: 'eq' | 'lt' | 'gt';
  value: string | number;
}

/** The rows of a collection, optionally filtered, and the numeric column a question is about. */
export interface TableQuery {
  collection: EntityKind;
  filter?: RowFilter;
  attribute: string;
}

/** Aggregates of `table-aggregate` (`count` counts the filtered rows). */
export type Aggregate = 'sum' | 'mean' | 'median' | 'range' | 'count';

/** A python task's structured form (what a careful reader gets from the question). */
export type PythonTaskSpec =
  | { kind: 'table-aggregate'; table: TableQuery; agg: Aggregate }
  | { kind: 'table-rank'; table: TableQuery; rank: number; order: 'desc' | 'asc' }
  | { kind: 'date-diff'; refs: [ValueRef, ValueRef] }
  | { kind: 'date-weekday'; refs: [ValueRef] }
  | { kind: 'string-count'; refs: [ValueRef]; letter?: string }
  | { kind: 'string-reverse'; refs: [ValueRef] };

/** A task of the python bank. */
export type PythonTask = PythonTaskSpec & {
  id: string;
  split: Split;
  question: string;
  answerType: 'number' | 'string';
  /** Whether some training task of `gymflow/tool-use-python-v0` (base or python) has the same answer. */
  answerInTrain: boolean;
};

/** Every python kind, in bank order. */
export const PYTHON_TASK_KINDS: readonly PythonTaskKind[] = ['table-aggregate', 'table-rank', 'date-diff', 'date-weekday', 'string-count', 'string-reverse'];

const BANK_SEED = 0x7e57a;

/** Numeric columns per kind (what tables aggregate and rank). */
const NUMERIC: Readonly<Record<EntityKind, readonly string[]>> = {
  city: ['population', 'area_km2', 'elevation_m', 'founded'],
  company: ['employees', 'founded'],
  product: ['price', 'weight_kg', 'launched'],
  person: ['born'],
};
/** Columns whose sum means something (not years). */
const SUMMABLE = new Set(['population', 'area_km2', 'employees', 'price', 'weight_kg']);
/** Thresholds of the count questions, per column. */
const THRESHOLDS: Readonly<Record<string, readonly number[]>> = {
  population: [20000, 50000, 100000],
  area_km2: [30, 50, 100],
  elevation_m: [10, 500, 1000],
  founded: [1300, 1500, 1700, 1900, 1950],
  employees: [1000, 2000, 5000],
  price: [10, 100, 1000],
  weight_kg: [1, 10, 100],
  launched: [1900, 1950],
  born: [1850, 1900],
};
/** Link columns whose value a string question reads, and plain string columns. */
const NAME_LINKS: Readonly<Partial<Record<EntityKind, string>>> = { company: 'founder', product: 'maker', person: 'birthplace' };
const STRING_COLUMNS: Readonly<Record<EntityKind, readonly string[]>> = {
  city: ['region'],
  company: ['industry', 'headquarters', 'founder'],
  product: ['category', 'maker'],
  person: ['occupation', 'birthplace'],
};

// ---------------------------------------------------------------------------------------------------
// Wording

const NOUN: Readonly<Record<string, string>> = {
  population: 'population',
  area_km2: 'area in square kilometres',
  elevation_m: 'elevation in metres',
  founded: 'founding year',
  employees: 'number of employees',
  price: 'price in crowns',
  weight_kg: 'weight in kilograms',
  launched: 'launch year',
  born: 'birth year',
};
/** Superlatives of a column: [descending (largest first), ascending]. */
const SUPERLATIVE: Readonly<Record<string, readonly [string, string]>> = {
  population: ['largest population', 'smallest population'],
  area_km2: ['largest area', 'smallest area'],
  elevation_m: ['highest elevation', 'lowest elevation'],
  founded: ['latest founding year', 'earliest founding year'],
  employees: ['largest number of employees', 'smallest number of employees'],
  price: ['highest price', 'lowest price'],
  weight_kg: ['greatest weight', 'smallest weight'],
  launched: ['latest launch year', 'earliest launch year'],
  born: ['latest birth year', 'earliest birth year'],
};
/** Threshold phrases of a column: [above, below]. */
const THRESHOLD_PHRASE: Readonly<Record<string, readonly [(v: number) => string, (v: number) => string]>> = {
  population: [(v) => `have a population above ${v}`, (v) => `have a population below ${v}`],
  area_km2: [(v) => `cover more than ${v} square kilometres`, (v) => `cover less than ${v} square kilometres`],
  elevation_m: [(v) => `lie higher than ${v} metres`, (v) => `lie lower than ${v} metres`],
  founded: [(v) => `were founded after ${v}`, (v) => `were founded before ${v}`],
  employees: [(v) => `have more than ${v} employees`, (v) => `have fewer than ${v} employees`],
  price: [(v) => `cost more than ${v} crowns`, (v) => `cost less than ${v} crowns`],
  weight_kg: [(v) => `weigh more than ${v} ${v === 1 ? 'kilogram' : 'kilograms'}`, (v) => `weigh less than ${v} ${v === 1 ? 'kilogram' : 'kilograms'}`],
  launched: [(v) => `were launched after ${v}`, (v) => `were launched before ${v}`],
  born: [(v) => `were born after ${v}`, (v) => `were born before ${v}`],
};
const DATE_LABEL: Readonly<Record<string, string>> = { birth_date: 'birth date', founding_date: 'founding date', launch_date: 'launch date' };
const VALUE_PHRASE: Readonly<Record<string, (s: string) => string>> = {
  founder: (s) => `the name of the founder of ${s}`,
  maker: (s) => `the name of the company that makes ${s}`,
  headquarters: (s) => `the name of the city where ${s} is headquartered`,
  birthplace: (s) => `the name of the city where ${s} was born`,
  region: (s) => `the region of ${s}`,
  industry: (s) => `the industry of ${s}`,
  category: (s) => `the product category of ${s}`,
  occupation: (s) => `the occupation of ${s}`,
};
const ORDINAL = ['', '', 'second-', 'third-'];

function lookupPhrase<T>(table: Readonly<Record<string, T>>, key: string, what: string): T {
  const value = Object.hasOwn(table, key) ? table[key] : undefined;
  if (value === undefined) throw new TaskError(`tool-use: no ${what} wording for '${key}'`);
  return value;
}

function subjectOf(q: TableQuery): string {
  const name = COLLECTIONS[q.collection].name;
  const f = q.filter;
  if (f === undefined) return `all ${name}`;
  if (f.via === 'headquarters') return `the ${name} headquartered in a city of the ${f.value} region`;
  if (f.via === 'birthplace') return `the ${name} born in a city of the ${f.value} region`;
  if (f.attribute === 'region') return `the ${name} in the ${f.value} region`;
  if (f.attribute === 'category') return `the ${name} in the '${f.value}' category`;
  throw new TaskError(`tool-use: no wording for the filter ${JSON.stringify(f)}`);
}

function datePhrase(ref: ValueRef): string {
  return `the ${lookupPhrase(DATE_LABEL, ref.attribute, 'date')} of ${subjectPhrase(ref)}`;
}

function valuePhrase(ref: ValueRef): string {
  if (!('entity' in ref.from)) throw new TaskError('tool-use: python tasks name their entities');
  return lookupPhrase(VALUE_PHRASE, ref.attribute, 'value')(ref.from.entity);
}

/** The question text of a python task spec, ending with the expected answer format. */
export function renderPythonQuestion(spec: PythonTaskSpec): string {
  const hint = pythonAnswerType(spec) === 'number' ? 'Answer with a number.' : 'Answer with a name or short phrase.';
  switch (spec.kind) {
    case 'table-aggregate': {
      const q = spec.table;
      const noun = lookupPhrase(NOUN, q.attribute, 'column');
      const subject = spec.agg === 'count' ? '' : subjectOf(q);
      switch (spec.agg) {
        case 'sum':
          return `What is the total ${noun} of ${subject}? ${hint}`;
        case 'mean':
          return `What is the average ${noun} of ${subject}, rounded to 2 decimal places? ${hint}`;
        case 'median':
          return `What is the median ${noun} of ${subject}? ${hint}`;
        case 'range':
          return `What is the difference between the largest and the smallest ${noun} among ${subject}? ${hint}`;
        case 'count': {
          const f = q.filter;
          if (f === undefined || f.op === 'eq' || typeof f.value !== 'number') throw new TaskError('tool-use: a count needs a threshold');
          const [above, below] = lookupPhrase(THRESHOLD_PHRASE, f.attribute, 'threshold');
          return `How many ${COLLECTIONS[q.collection].name} ${(f.op === 'gt' ? above : below)(f.value)}? ${hint}`;
        }
      }
      break;
    }
    case 'table-rank': {
      const [desc, asc] = lookupPhrase(SUPERLATIVE, spec.table.attribute, 'superlative');
      const subject = subjectOf(spec.table).replace(/^all /, 'all the ');
      return `Among ${subject}, which one has the ${ORDINAL[spec.rank] ?? ''}${spec.order === 'desc' ? desc : asc}? ${hint}`;
    }
    case 'date-diff':
      return `How many days lie between ${datePhrase(spec.refs[0])} and ${datePhrase(spec.refs[1])}? ${hint}`;
    case 'date-weekday':
      return `On which day of the week was ${datePhrase(spec.refs[0])}? ${hint}`;
    case 'string-count':
      return spec.letter === undefined
        ? `How many letters does ${valuePhrase(spec.refs[0])} contain, not counting spaces and other characters? ${hint}`
        : `How many times does the letter '${spec.letter}' occur in ${valuePhrase(spec.refs[0])}, ignoring case? ${hint}`;
    case 'string-reverse':
      return `Take ${valuePhrase(spec.refs[0])} and spell it backwards, letter by letter: what do you get? ${hint}`;
  }
  throw new TaskError(`tool-use: no wording for ${JSON.stringify(spec)}`);
}

/** Whether a python task's answer is a number or a string. */
export function pythonAnswerType(spec: PythonTaskSpec): 'number' | 'string' {
  return spec.kind === 'table-rank' || spec.kind === 'date-weekday' || spec.kind === 'string-reverse' ? 'string' : 'number';
}

// ---------------------------------------------------------------------------------------------------
// Gold answers

const byExactName = new WeakMap<KnowledgeBase, Map<string, WorldEntity>>();

/**
 * The entity of a name as the world writes it (links and task specs do), without `kb.get`'s normalisation: the
 * bank's candidates resolve thousands of names, and `gymflow envs` counts them.
 */
function named(kb: KnowledgeBase, name: string): WorldEntity | undefined {
  let map = byExactName.get(kb);
  if (!map) {
    map = new Map(kb.entities.map((e) => [e.name, e]));
    byExactName.set(kb, map);
  }
  return map.get(name) ?? kb.get(name);
}

function entity(kb: KnowledgeBase, name: string): WorldEntity {
  const e = named(kb, name);
  if (!e) throw new TaskError(`tool-use: task refers to an unknown entity '${name}'`);
  return e;
}

function refValue(kb: KnowledgeBase, ref: ValueRef): AttributeValue {
  if (!('entity' in ref.from)) throw new TaskError('tool-use: python tasks name their entities');
  let e = entity(kb, ref.from.entity);
  if (ref.via !== undefined) e = entity(kb, String(e.attributes[ref.via]));
  const value = extendedValue(e, ref.attribute);
  if (value === undefined) throw new TaskError(`tool-use: no '${ref.attribute}' for '${e.name}'`);
  return value;
}

function matches(kb: KnowledgeBase, row: WorldEntity, f: RowFilter): boolean {
  const target = f.via === undefined ? row : named(kb, String(row.attributes[f.via]));
  const value = target === undefined ? undefined : extendedValue(target, f.attribute);
  if (f.op === 'eq') return value === f.value;
  return f.op === 'lt' ? Number(value) < Number(f.value) : Number(value) > Number(f.value);
}

/** The rows a table question is about, in world order (the order `lookup` lists them). */
export function tableRows(kb: KnowledgeBase, q: TableQuery): WorldEntity[] {
  return kb.list(q.collection).filter((row) => q.filter === undefined || matches(kb, row, q.filter));
}

function column(rows: readonly WorldEntity[], attribute: string): number[] {
  return rows.map((r) => Number(extendedValue(r, attribute)));
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** The rows in rank order (stable: ties keep world order, as Python's `sorted` does). */
function ranked(rows: readonly WorldEntity[], attribute: string, order: 'desc' | 'asc'): { row: WorldEntity; value: number }[] {
  const keyed = rows.map((row) => ({ row, value: Number(extendedValue(row, attribute)) }));
  return keyed.sort((a, b) => (order === 'desc' ? b.value - a.value : a.value - b.value));
}

/** The expected answer of a python task, computed from the knowledge base (never stored). */
export function expectedPythonAnswer(spec: PythonTaskSpec, kb: KnowledgeBase = defaultKnowledgeBase()): ExpectedAnswer {
  switch (spec.kind) {
    case 'table-aggregate': {
      const rows = tableRows(kb, spec.table);
      const xs = column(rows, spec.table.attribute);
      const sum = xs.reduce((a, b) => a + b, 0);
      const value = {
        sum,
        // The question asks for 2 decimals; the answer check's 0.01 tolerance takes any rounding of the exact mean.
        mean: sum / xs.length,
        median: median(xs),
        range: Math.max(...xs) - Math.min(...xs),
        count: rows.length,
      }[spec.agg];
      return { type: 'number', value };
    }
    case 'table-rank': {
      const at = ranked(tableRows(kb, spec.table), spec.table.attribute, spec.order)[spec.rank - 1];
      if (!at) throw new TaskError(`tool-use: rank ${spec.rank} of a table with fewer rows`);
      return { type: 'string', value: at.row.name };
    }
    case 'date-diff': {
      const [a, b] = spec.refs.map((r) => dayNumber(String(refValue(kb, r)))) as [number, number];
      return { type: 'number', value: Math.abs(a - b) };
    }
    case 'date-weekday':
      return { type: 'string', value: weekdayName(String(refValue(kb, spec.refs[0]))) };
    case 'string-count': {
      const text = String(refValue(kb, spec.refs[0])).toLowerCase();
      const letter = spec.letter;
      const value = letter === undefined ? (text.match(/[a-z]/g) ?? []).length : [...text].filter((c) => c === letter).length;
      return { type: 'number', value };
    }
    case 'string-reverse':
      return { type: 'string', value: [...String(refValue(kb, spec.refs[0]))].reverse().join('') };
  }
}

// ---------------------------------------------------------------------------------------------------
// Candidates and the bank

function pairs<T>(items: readonly T[]): [T, T][] {
  const out: [T, T][] = [];
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) out.push([items[i] as T, items[j] as T]);
  return out;
}

/** The group filters of a collection: a region (directly or through a link), a category with several products. */
function groupFilters(kb: KnowledgeBase, kind: EntityKind): RowFilter[] {
  const regions = [...new Set(kb.list('city').map((c) => String(c.attributes.region)))];
  switch (kind) {
    case 'city':
      return regions.map((value) => ({ attribute: 'region', op: 'eq', value }));
    case 'company':
      return regions.map((value) => ({ via: 'headquarters', attribute: 'region', op: 'eq', value }));
    case 'person':
      return regions.map((value) => ({ via: 'birthplace', attribute: 'region', op: 'eq', value }));
    case 'product': {
      const categories = kb.list('product').map((p) => String(p.attributes.category));
      return [...new Set(categories)].filter((c) => categories.filter((x) => x === c).length >= 2).map((value) => ({ attribute: 'category', op: 'eq', value }));
    }
  }
}

const KINDS: readonly EntityKind[] = ['city', 'company', 'product', 'person'];

function tableCandidates(kb: KnowledgeBase, rank: boolean): PythonTaskSpec[] {
  const out: PythonTaskSpec[] = [];
  for (const collection of KINDS) {
    const filters: (RowFilter | undefined)[] = [undefined, ...groupFilters(kb, collection)];
    for (const filter of filters) {
      for (const attribute of NUMERIC[collection]) {
        const table: TableQuery = filter === undefined ? { collection, attribute } : { collection, filter, attribute };
        const rows = tableRows(kb, table);
        if (!rank) {
          if (rows.length < 3) continue;
          for (const agg of ['sum', 'mean', 'median', 'range'] as const) {
            if (agg === 'sum' && !SUMMABLE.has(attribute)) continue;
            out.push({ kind: 'table-aggregate', table, agg });
          }
          continue;
        }
        for (const order of ['desc', 'asc'] as const) {
          const values = ranked(rows, attribute, order).map((r) => r.value);
          for (let k = 1; k <= 3; k++) {
            // At least one row past the k-th, and no tie around it: one right answer.
            if (values.length <= k || values[k - 1] === values[k] || (k > 1 && values[k - 1] === values[k - 2])) continue;
            out.push({ kind: 'table-rank', table, rank: k, order });
          }
        }
      }
    }
    if (rank) continue;
    for (const attribute of NUMERIC[collection]) {
      const all = column(kb.list(collection), attribute);
      for (const threshold of THRESHOLDS[attribute] ?? []) {
        // A threshold equal to some value would make "before 1900" ambiguous.
        if (all.includes(threshold)) continue;
        for (const op of ['gt', 'lt'] as const) {
          const table: TableQuery = { collection, filter: { attribute, op, value: threshold }, attribute };
          const n = tableRows(kb, table).length;
          if (n >= 1 && n < all.length) out.push({ kind: 'table-aggregate', table, agg: 'count' });
        }
      }
    }
  }
  return out;
}

/** Dates and the links that lead to one: `[from, via?, date attribute]` for every named entity. */
function dateRefs(kb: KnowledgeBase): ValueRef[] {
  const out: ValueRef[] = [];
  for (const e of kb.list()) {
    out.push({ from: { entity: e.name }, attribute: DATE_ATTRIBUTES[e.kind].attribute });
  }
  for (const e of kb.list()) {
    for (const via of STRING_COLUMNS[e.kind]) {
      const target = named(kb, String(e.attributes[via]));
      if (target === undefined) continue;
      out.push({ from: { entity: e.name }, via, attribute: DATE_ATTRIBUTES[target.kind].attribute });
    }
  }
  return out;
}

function stringRefs(kb: KnowledgeBase): ValueRef[] {
  return kb.list().flatMap((e) => STRING_COLUMNS[e.kind].map((attribute): ValueRef => ({ from: { entity: e.name }, attribute })));
}

function candidates(kind: PythonTaskKind, kb: KnowledgeBase): PythonTaskSpec[] {
  switch (kind) {
    case 'table-aggregate':
      return tableCandidates(kb, false);
    case 'table-rank':
      return tableCandidates(kb, true);
    case 'date-diff': {
      const out: PythonTaskSpec[] = [];
      const byKind = (k: EntityKind): ValueRef[] => kb.list(k).map((e) => ({ from: { entity: e.name }, attribute: DATE_ATTRIBUTES[k].attribute }));
      for (const k of KINDS) for (const [a, b] of pairs(byKind(k))) out.push({ kind, refs: [a, b] });
      // Through a link: a company's founding against its founder's birth, a product's launch against its maker's founding, …
      for (const e of kb.list()) {
        const link = NAME_LINKS[e.kind];
        const target = link === undefined ? undefined : named(kb, String(e.attributes[link]));
        if (link === undefined || target === undefined) continue;
        out.push({ kind, refs: [{ from: { entity: e.name }, via: link, attribute: DATE_ATTRIBUTES[target.kind].attribute }, { from: { entity: e.name }, attribute: DATE_ATTRIBUTES[e.kind].attribute }] });
      }
      // The same date twice would make a question whose answer is 0.
      return out.filter((s) => s.kind === 'date-diff' && refValue(kb, s.refs[0]) !== refValue(kb, s.refs[1]));
    }
    case 'date-weekday':
      return dateRefs(kb).map((ref) => ({ kind, refs: [ref] }));
    case 'string-count':
      return stringRefs(kb).flatMap((ref): PythonTaskSpec[] => {
        const letters = [...new Set(String(refValue(kb, ref)).toLowerCase().match(/[a-z]/g) ?? [])].sort();
        return [{ kind, refs: [ref] }, ...letters.map((letter): PythonTaskSpec => ({ kind, refs: [ref], letter }))];
      });
    case 'string-reverse':
      return stringRefs(kb).map((ref) => ({ kind, refs: [ref] }));
  }
}

/** How many of a kind's `pool` candidates go to each split. */
function dealSizes(kind: PythonTaskKind, pool: number): { heldout: number; train: number } {
  if (pool < PYTHON_HELDOUT_PER_KIND * 3) throw new TaskError(`tool-use: only ${pool} candidate '${kind}' tasks`);
  return { heldout: PYTHON_HELDOUT_PER_KIND, train: Math.min(pool - PYTHON_HELDOUT_PER_KIND, TRAIN_TASKS_PER_KIND) };
}

/** The python bank's specs per split, before ids and answers (deterministic). */
function dealt(kb: KnowledgeBase): Record<Split, PythonTaskSpec[]> {
  const out: Record<Split, PythonTaskSpec[]> = { train: [], heldout: [] };
  PYTHON_TASK_KINDS.forEach((kind, k) => {
    // One question, one candidate: identical wordings (none today) would put a question in both splits.
    const seen = new Set<string>();
    const unique = candidates(kind, kb).filter((s) => {
      const q = renderPythonQuestion(s);
      if (seen.has(q)) return false;
      seen.add(q);
      return true;
    });
    const pool = new Rng(BANK_SEED + k).shuffle(unique);
    const { heldout, train } = dealSizes(kind, pool.length);
    out.heldout.push(...pool.slice(0, heldout));
    out.train.push(...pool.slice(heldout, heldout + train));
  });
  return { train: new Rng(BANK_SEED + 100).shuffle(out.train), heldout: new Rng(BANK_SEED + 200).shuffle(out.heldout) };
}

/** Numbers to the cent (the answer check's tolerance), names as the check normalises them. */
export function answerKey(a: ExpectedAnswer): string {
  return a.type === 'number' ? `n:${Math.round(a.value * 100)}` : `s:${normalizeAnswer(a.value)}`;
}

/**
 * Builds the python bank from a knowledge base (exported for tests). `trainAnswerKeys` are the {@link answerKey}s of
 * the base bank's training answers; with the python training answers they decide `answerInTrain`.
 */
export function buildPythonTaskBank(kb: KnowledgeBase, trainAnswerKeys: ReadonlySet<string>): Record<Split, PythonTask[]> {
  const specs = dealt(kb);
  const keys = new Set([...trainAnswerKeys, ...specs.train.map((s) => answerKey(expectedPythonAnswer(s, kb)))]);
  const finish = (split: Split, list: PythonTaskSpec[]): PythonTask[] =>
    list.map((spec, i) => ({
      ...spec,
      id: `tool-python-${split}-${String(i).padStart(5, '0')}`,
      split,
      question: renderPythonQuestion(spec),
      answerType: pythonAnswerType(spec),
      answerInTrain: split === 'train' || keys.has(answerKey(expectedPythonAnswer(spec, kb))),
    }));
  return { train: finish('train', specs.train), heldout: finish('heldout', specs.heldout) };
}

/**
 * The python bank's size per split for the bundled world, what `gymflow envs` shows without enumerating the
 * candidates (tens of milliseconds of a cold start). `python-tasks.test.ts` checks it against the candidates and the
 * bank: a change to the world or the kinds that changes the bank fails there until this is updated.
 */
export const PYTHON_TASK_COUNTS: Readonly<Record<Split, number>> = { train: 1018, heldout: 48 };

/** How many python tasks a split has (both when omitted), from the candidates' counts alone (no question rendered). */
export function countPythonTasks(split?: Split, kb?: KnowledgeBase): number {
  let train = PYTHON_TASK_COUNTS.train;
  let heldout = PYTHON_TASK_COUNTS.heldout;
  if (kb !== undefined && kb !== defaultKnowledgeBase()) {
    // No two candidates share a question (python-tasks.test.ts), so the candidates' counts are the bank's.
    train = 0;
    heldout = 0;
    for (const kind of PYTHON_TASK_KINDS) {
      const sizes = dealSizes(kind, candidates(kind, kb).length);
      train += sizes.train;
      heldout += sizes.heldout;
    }
  }
  return split === 'train' ? train : split === 'heldout' ? heldout : train + heldout;
}

/** The candidates of every kind (exported for tests: no two share a question). */
export function pythonCandidates(kb: KnowledgeBase = defaultKnowledgeBase()): PythonTaskSpec[] {
  return PYTHON_TASK_KINDS.flatMap((kind) => candidates(kind, kb));
}

/** Whether an id names a python task (`tool-python-…`). */
export function isPythonTaskId(id: string): boolean {
  return id.startsWith('tool-python-');
}

/** Whether a task spec is a python one (its kind is one of {@link PYTHON_TASK_KINDS}). */
export function isPythonSpec(spec: { kind: string }): spec is PythonTaskSpec {
  return (PYTHON_TASK_KINDS as readonly string[]).includes(spec.kind);
}
