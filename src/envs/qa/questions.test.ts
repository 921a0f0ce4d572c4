import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, SchemaError } from '../../core/errors.js';
import { elementLines, loadQuestions, parseQuestions } from './questions.js';

const FIXTURES = join(import.meta.dirname, '__fixtures__');
const dir = mkdtempSync(join(tmpdir(), 'gymflow-qa-questions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (o: Record<string, unknown>): string => JSON.stringify(o);
const ok = { id: 'a', question: 'Q?', answer: '1', answer_type: 'exactMatch' };

describe('loadQuestions', () => {
  it("reads HLE's JSONL, leaving out and counting the questions with an image", () => {
    const set = loadQuestions(join(FIXTURES, 'questions.jsonl'));
    expect(set.questions.map((q) => q.id)).toEqual(['q-capital', 'q-prime', 'q-noble', 'q-derivative', 'q-planets']);
    expect(set.skippedImages).toBe(1);
    expect(set.questions[0]).toEqual({
      id: 'q-capital',
      question: 'What is the capital city of Australia?',
      answer: 'Canberra',
      answerType: 'exactMatch',
      category: 'Other',
      rawSubject: 'Geography',
      rationale: 'Canberra was purpose-built as the capital.',
      place: `${join(FIXTURES, 'questions.jsonl')}:1`,
    });
    expect(set.questions[2]).toMatchObject({ answerType: 'multipleChoice', answer: 'B' });
  });

  it('keeps them, image and all, when image input is declared', () => {
    const set = loadQuestions(join(FIXTURES, 'questions.jsonl'), { imageInput: true });
    expect(set.skippedImages).toBe(0);
    expect(set.questions.find((q) => q.id === 'q-figure')?.image).toMatch(/^data:image\/png;base64,/);
  });

  it('reads a JSON array, each question placed at the line it starts on', () => {
    const set = loadQuestions(join(FIXTURES, 'train.json'));
    expect(set.questions.map((q) => [q.id, q.answerType, q.place.split(':').pop()])).toEqual([
      ['t-boiling', 'exactMatch', '2'],
      ['t-hexagon', 'multipleChoice', '9'],
    ]);
  });

  it('reads the file again only when it changed', () => {
    const file = join(dir, 'changing.jsonl');
    writeFileSync(file, `${line(ok)}\n`);
    const first = loadQuestions(file);
    expect(loadQuestions(file)).toBe(first);
    writeFileSync(file, `${line(ok)}\n${line({ ...ok, id: 'b' })}\n`);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(loadQuestions(file).questions).toHaveLength(2);
  });

  it('names a file that is missing or not a file', () => {
    expect(() => loadQuestions(join(dir, 'nope.jsonl'))).toThrow(ConfigError);
    expect(() => loadQuestions(join(dir, 'nope.jsonl'))).toThrow(/nope\.jsonl: cannot read the question set \(ENOENT/);
    expect(() => loadQuestions(dir)).toThrow(/: not a file/);
  });
});

describe('parseQuestions errors', () => {
  it('lists every bad record as file:line $.field: what is wrong', () => {
    const text = [
      line(ok),
      line({ id: 'b', question: 'Q?', answer_type: 'exactMatch' }),
      '',
      line({ id: 'c', question: 'Q?', answer: 'x', answer_type: 'freeForm' }),
      '{"id": "d", "question": ',
      '"just a string"',
      line({ ...ok, id: 'a' }),
      line({ id: 7, question: 'Q?', answer: 2, answer_type: 'multiple_choice' }),
    ].join('\n');
    const err = (() => {
      try {
        parseQuestions(text, 'hle.jsonl');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(SchemaError);
    const lines = (err as SchemaError).message.split('\n');
    expect(lines[0]).toBe("hle.jsonl: not a question set in HLE's format:");
    expect(lines.slice(1)).toEqual([
      'hle.jsonl:2 $.answer: missing: every question needs the reference answer',
      'hle.jsonl:4 $.answer_type: expected exactMatch or multipleChoice (HLE\'s answer types), got "freeForm"',
      expect.stringMatching(/^hle\.jsonl:5 \$: not valid JSON \(.*\); a JSONL question set has one JSON object per line$/),
      'hle.jsonl:6 $: expected a JSON object (one question), got string "just a string"',
      'hle.jsonl:7 $.id: duplicate id "a" (first at hle.jsonl:1)',
      'hle.jsonl:8 $.id: expected a string (an id)',
      'hle.jsonl:8 $.answer: expected a string (the reference answer)',
    ]);
  });

  it('places the problems of a JSON array at their element and line', () => {
    const text = `[\n  ${line(ok)},\n  {\n    "id": "b",\n    "question": "",\n    "answer": "x",\n    "answer_type": "exactMatch"\n  }\n]\n`;
    expect(() => parseQuestions(text, 'set.json')).toThrow(/^set\.json: not a question set in HLE's format:\nset\.json:3 \$\[1\]\.question: must not be empty$/);
    expect(() => parseQuestions('{"questions": []}', 'set.json')).toThrow(/^set\.json:1 \$: expected a JSON array of questions, got an object/);
    expect(() => parseQuestions('[{"id": "a",', 'set.json')).toThrow(/^set\.json: not valid JSON/);
    expect(() => parseQuestions('\n\n', 'empty.jsonl')).toThrow(/^empty\.jsonl: no questions/);
  });

  it('reads the other spellings of the answer types, and a file without an extension by its first character', () => {
    const set = parseQuestions(`[${line({ ...ok, answer_type: 'multiple-choice' })}, ${line({ ...ok, id: 'b', answer_type: 'exact_match' })}]`, 'questions');
    expect(set.questions.map((q) => q.answerType)).toEqual(['multipleChoice', 'exactMatch']);
  });
});

describe('elementLines', () => {
  it('finds where each top-level element starts, past strings with brackets and escapes', () => {
    const text = '[\n"a [\\"]", {"x": [1,\n2]},\n\n  3\n, null]';
    expect(elementLines(text)).toEqual([2, 2, 5, 6]);
    expect(elementLines('[]')).toEqual([]);
  });
});
