import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { checkAnswer, formatExpected } from './answer.js';
import { buildToolTaskBank, countToolTasks, expectedAnswer, getToolTask, listToolTasks, TOOL_TASK_COUNTS, toolTaskInfo, TRAIN_TASKS_PER_KIND } from './tasks.js';

const CORE_FIRST_QUESTION = 'What is the population of the city where Corwin Tally was born? Answer with a number.';
const CORE_LAST_QUESTION = 'In which region is Brackenfell? Answer with a name or short phrase.';

describe('tool-use tasks', () => {
  it('has at least 150 training and 60 held-out tasks with the documented counts', () => {
    const train = listToolTasks('train');
    const heldout = listToolTasks('heldout');
    expect(train.length).toBeGreaterThanOrEqual(150);
    expect(heldout.length).toBeGreaterThanOrEqual(60);
    const core = train.slice(0, 185);
    for (const [kind, counts] of Object.entries(TOOL_TASK_COUNTS)) {
      expect(core.filter((t) => t.kind === kind)).toHaveLength(counts.train);
      expect(heldout.filter((t) => t.kind === kind)).toHaveLength(counts.heldout);
      // the extension: further candidates up to TRAIN_TASKS_PER_KIND (fewer where a kind has fewer)
      const all = train.filter((t) => t.kind === kind).length;
      expect(all).toBeGreaterThan(counts.train);
      expect(all).toBeLessThanOrEqual(TRAIN_TASKS_PER_KIND);
    }
    expect(train.length).toBe(1527);
    // Counted from the candidates alone, as `gymflow envs` does, without building the bank.
    expect([countToolTasks('train'), countToolTasks('heldout'), countToolTasks()]).toEqual([train.length, heldout.length, train.length + heldout.length]);
    expect(train[42]?.id).toBe('tool-train-00042');
    expect(train.map((t) => t.id)).toEqual(train.map((_, i) => `tool-train-${String(i).padStart(5, '0')}`));
  });

  it('keeps the ids and questions of the core bank when the training split is extended', () => {
    // Pinned before the extension: ids of the core tasks must keep naming the same questions.
    const train = listToolTasks('train');
    expect(train[0]?.question).toBe(CORE_FIRST_QUESTION);
    expect(train[184]?.question).toBe(CORE_LAST_QUESTION);
  });

  it('keeps the splits disjoint', () => {
    const trainQuestions = new Set(listToolTasks('train').map((t) => t.question));
    expect(listToolTasks('heldout').filter((t) => trainQuestions.has(t.question))).toEqual([]);
    expect(new Set(listToolTasks().map((t) => t.question)).size).toBe(listToolTasks().length);
  });

  it('is deterministic', () => {
    expect(buildToolTaskBank()).toEqual({ train: listToolTasks('train'), heldout: listToolTasks('heldout') });
  });

  it('includes multi-hop and search-first tasks', () => {
    const tasks = listToolTasks();
    const hops = tasks.filter((t) => t.refs.some((r) => r.via !== undefined));
    const computed = tasks.filter((t) => t.op.op !== 'value');
    const searched = tasks.filter((t) => t.refs.some((r) => 'clue' in r.from) && t.op.op !== 'value');
    expect(hops.length).toBeGreaterThanOrEqual(30);
    expect(computed.length).toBeGreaterThanOrEqual(80);
    expect(searched.length).toBeGreaterThanOrEqual(30);
    const combined = tasks.find((t) => t.kind === 'sum' && t.refs[0]?.attribute === 'population');
    expect(combined?.question).toMatch(/^What is the combined population of \w[\w ]* and \w[\w ]*\? Answer with a number\.$/);
  });

  it('computes expected answers from the knowledge base', () => {
    const spec = { kind: 'diff-years', refs: [{ from: { entity: 'Brightwell Dynamics' }, via: 'founder', attribute: 'born' }, { from: { entity: 'Brightwell Dynamics' }, attribute: 'founded' }], op: { op: 'diff' } } as const;
    expect(expectedAnswer({ ...spec, refs: [...spec.refs] })).toEqual({ type: 'number', value: 1921 - 1889 });
    expect(expectedAnswer({ kind: 'discount', refs: [{ from: { entity: 'Azure Carafe' }, attribute: 'price' }], op: { op: 'discount', percent: 15, quantity: 3 } })).toEqual({
      type: 'number',
      value: (42.5 * 3 * 85) / 100,
    });
    expect(expectedAnswer({ kind: 'search-lookup', refs: [{ from: { clue: 'a river port famous for its blue glassworks', kind: 'city' }, attribute: 'population' }], op: { op: 'value' } })).toEqual({
      type: 'number',
      value: 48200,
    });
  });

  it('publishes neither the answer nor the hidden entity', () => {
    for (const task of listToolTasks().filter((t) => t.kind.startsWith('search'))) {
      const info = JSON.stringify(toolTaskInfo(task));
      const expected = expectedAnswer(task);
      if (expected.type === 'string') expect(info).not.toContain(expected.value);
      expect(info).not.toContain('refs');
    }
  });

  it('marks the held-out tasks whose answer is also a training answer (59 of 74)', () => {
    const trainAnswers = listToolTasks('train').map((t) => expectedAnswer(t));
    const heldout = listToolTasks('heldout');
    for (const task of heldout) {
      const given = formatExpected(expectedAnswer(task));
      expect(trainAnswers.some((a) => checkAnswer(given, a)), task.id).toBe(task.answerInTrain);
      expect(toolTaskInfo(task).metadata?.['answerInTrain']).toBe(task.answerInTrain);
    }
    expect(heldout.filter((t) => t.answerInTrain)).toHaveLength(59);
    expect(listToolTasks('train').every((t) => t.answerInTrain)).toBe(true);
  });

  it('rejects unknown ids with a TaskError', () => {
    expect(() => getToolTask('tool-train-99999')).toThrow(TaskError);
  });
});
