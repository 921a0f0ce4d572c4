import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { checkAnswer, formatExpected } from './answer.js';
import { extendedValue } from './extended-lookup.js';
import { defaultKnowledgeBase, KnowledgeBase } from './knowledge-base.js';
import {
  answerKey,
  buildPythonTaskBank,
  countPythonTasks,
  expectedPythonAnswer,
  PYTHON_HELDOUT_PER_KIND,
  PYTHON_TASK_COUNTS,
  PYTHON_TASK_KINDS,
  pythonCandidates,
  renderPythonQuestion,
  tableRows,
  type PythonTask,
  type PythonTaskSpec,
} from './python-tasks.js';
import { countBankTasks, expectedBankAnswer, getBankTask, isPythonTask, listBankTasks } from './task-bank.js';
import { expectedAnswer, listToolTasks, TRAIN_TASKS_PER_KIND } from './tasks.js';

const kb = defaultKnowledgeBase();
const python = (split: 'train' | 'heldout'): PythonTask[] => listBankTasks(true, split).filter(isPythonTask);

describe('python task kinds', () => {
  it('deals every kind into both splits with their own ids, and counts them without building them', () => {
    for (const kind of PYTHON_TASK_KINDS) {
      expect(python('heldout').filter((t) => t.kind === kind)).toHaveLength(PYTHON_HELDOUT_PER_KIND);
      const train = python('train').filter((t) => t.kind === kind).length;
      expect(train).toBeGreaterThanOrEqual(60);
      expect(train).toBeLessThanOrEqual(TRAIN_TASKS_PER_KIND);
    }
    for (const split of ['train', 'heldout'] as const) {
      expect(python(split).map((t) => t.id)).toEqual(python(split).map((_, i) => `tool-python-${split}-${String(i).padStart(5, '0')}`));
      expect(countPythonTasks(split)).toBe(python(split).length);
      // The fixed counts of the bundled world are the candidates' (a copy of the world counts them).
      expect(countPythonTasks(split, new KnowledgeBase(kb.entities))).toBe(PYTHON_TASK_COUNTS[split]);
      expect(countBankTasks(true, split)).toBe(listBankTasks(true, split).length);
    }
  });

  it('leaves the base bank as it is: the python variant lists it first, same ids, questions and answers', () => {
    expect(listBankTasks(false, 'train')).toBe(listToolTasks('train'));
    expect(countBankTasks(false)).toBe(listToolTasks().length);
    for (const split of ['train', 'heldout'] as const) {
      const base = listToolTasks(split);
      const variant = listBankTasks(true, split).slice(0, base.length);
      expect(variant.map((t) => [t.id, t.question])).toEqual(base.map((t) => [t.id, t.question]));
      expect(listBankTasks(true, split).slice(base.length).every(isPythonTask)).toBe(true);
    }
    expect(getBankTask('tool-train-00042')).toBe(listToolTasks('train')[42]);
  });

  it('keeps every question in one split only, the base questions included; no two candidates share a question', () => {
    const all = listBankTasks(true);
    expect(new Set(all.map((t) => t.question)).size).toBe(all.length);
    // What lets countPythonTasks count candidates without rendering them.
    const questions = pythonCandidates(kb).map(renderPythonQuestion);
    expect(new Set(questions).size).toBe(questions.length);
  });

  it('is deterministic', () => {
    const keys = new Set(listToolTasks('train').map((t) => answerKey(expectedAnswer(t, kb))));
    const again = buildPythonTaskBank(kb, keys);
    expect(again.train).toEqual(python('train'));
    expect(again.heldout).toEqual(python('heldout'));
  });

  it('computes expected answers from the knowledge base (checked by hand)', () => {
    const highveld = { attribute: 'region', op: 'eq', value: 'Highveld' } as const;
    const cases: [PythonTaskSpec, string][] = [
      // Drummerlin 86100, Pellingford 56700, Halvard Crossing 12600, Emberlyn 98400.
      [{ kind: 'table-aggregate', table: { collection: 'city', filter: highveld, attribute: 'population' }, agg: 'median' }, '71400'],
      [{ kind: 'table-aggregate', table: { collection: 'city', filter: highveld, attribute: 'population' }, agg: 'mean' }, '63450'],
      // Companies headquartered there: Brightwell 4200, Corvane 980, Cinderbath 310, Tallyrand 2650.
      [{ kind: 'table-aggregate', table: { collection: 'company', filter: { via: 'headquarters', ...highveld }, attribute: 'employees' }, agg: 'sum' }, '8140'],
      [{ kind: 'table-aggregate', table: { collection: 'city', filter: { attribute: 'population', op: 'gt', value: 100000 }, attribute: 'population' }, agg: 'count' }, '2'],
      [{ kind: 'table-rank', table: { collection: 'city', attribute: 'population' }, rank: 2, order: 'desc' }, 'Corrowick'],
      [{ kind: 'table-rank', table: { collection: 'product', filter: { attribute: 'category', op: 'eq', value: 'food' }, attribute: 'price' }, rank: 1, order: 'asc' }, 'Tideflake Salt'],
      // CPython: (date(1921, 3, 16) - date(1889, 7, 20)).days, date(1889, 7, 20).strftime('%A').
      [{ kind: 'date-diff', refs: [{ from: { entity: 'Brightwell Dynamics' }, via: 'founder', attribute: 'birth_date' }, { from: { entity: 'Brightwell Dynamics' }, attribute: 'founding_date' }] }, '11561'],
      [{ kind: 'date-weekday', refs: [{ from: { entity: 'Orla Venn' }, attribute: 'birth_date' }] }, 'Saturday'],
      [{ kind: 'string-count', refs: [{ from: { entity: 'Brightwell Dynamics' }, attribute: 'founder' }], letter: 'n' }, '2'],
      [{ kind: 'string-count', refs: [{ from: { entity: 'Velmora' }, attribute: 'region' }] }, '10'],
      [{ kind: 'string-reverse', refs: [{ from: { entity: 'Azure Carafe' }, attribute: 'maker' }] }, 'skrowssalG lertnaV'],
    ];
    for (const [spec, want] of cases) expect(formatExpected(expectedPythonAnswer(spec, kb)), JSON.stringify(spec)).toBe(want);
  });

  it('asks rank questions with one right answer: no tie at the rank asked', () => {
    for (const t of listBankTasks(true).filter(isPythonTask)) {
      if (t.kind !== 'table-rank') continue;
      const values = tableRows(kb, t.table).map((r) => Number(extendedValue(r, t.table.attribute)));
      const answer = expectedPythonAnswer(t, kb).value;
      const at = tableRows(kb, t.table).find((r) => r.name === answer);
      const v = Number(at && extendedValue(at, t.table.attribute));
      expect(values.filter((x) => x === v), t.id).toHaveLength(1);
    }
  });

  it('marks the held-out tasks whose answer a training task of the variant also has (60 of 74 base, 31 of 48 python)', () => {
    const trainAnswers = listBankTasks(true, 'train').map((t) => expectedBankAnswer(t, kb));
    for (const task of listBankTasks(true, 'heldout')) {
      const given = formatExpected(expectedBankAnswer(task, kb));
      expect(trainAnswers.some((a) => checkAnswer(given, a)), task.id).toBe(task.answerInTrain);
    }
    const heldout = listBankTasks(true, 'heldout');
    expect(heldout.filter((t) => !isPythonTask(t) && t.answerInTrain)).toHaveLength(60);
    expect(heldout.filter((t) => isPythonTask(t) && t.answerInTrain)).toHaveLength(31);
  });

  it('refuses a python task in the base variant, naming the variant that has it, and unknown python ids', () => {
    expect(getBankTask('tool-python-heldout-00003', true).id).toBe('tool-python-heldout-00003');
    expect(() => getBankTask('tool-python-heldout-00003', false)).toThrow(/needs the python tool: it is a task of gymflow\/tool-use-python-v0/);
    expect(() => getBankTask('tool-python-train-99999')).toThrow(TaskError);
  });
});
