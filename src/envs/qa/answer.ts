import type { Question } from './questions.js';

/**
 * Reading a response in HLE's answer format, and the rule check.
 *
 * HLE asks the model for (`hle_eval/run_model_predictions.py`'s system prompts):
 *
 *   Explanation: {your explanation for your final answer}
 *   Exact Answer: {your succinct, final answer}            (multiple choice: `Answer: {your chosen answer}`)
 *   Confidence: {your confidence score between 0% and 100% for your answer}
 *
 * The rule check compares the stated answer with the reference after normalising both (Unicode NFKC, case,
 * surrounding whitespace, `**`/`$`/quotes around the answer, a final period, runs of spaces); a multiple-choice
 * answer is compared by its choice letter (`B`, `(B)`, `B.`, `B) text`). It is strict where HLE's judge is lenient
 * (an equivalent form, a numeric answer within a small margin): a rule check that passes is a right answer, one that
 * fails may still be.
 */

/** HLE's format instructions for an exact-match question. */
export const EXACT_ANSWER_FORMAT =
  'Your response should be in the following format:\nExplanation: {your explanation for your final answer}\nExact Answer: {your succinct, final answer}\nConfidence: {your confidence score between 0% and 100% for your answer}';

/** HLE's format instructions for a multiple-choice question. */
export const MULTIPLE_CHOICE_FORMAT =
  'Your response should be in the following format:\nExplanation: {your explanation for your answer choice}\nAnswer: {your chosen answer}\nConfidence: {your confidence score between 0% and 100% for your answer}';

/** What a response states: its final answer and its confidence (0–1), each when it gives one. */
export interface StatedAnswer {
  answer?: string;
  confidence?: number;
}

const ANSWER_LINE = /^[ \t]*(?:[*_#]+[ \t]*)?(?:exact[ \t]+answer|final[ \t]+answer|answer)(?:[ \t]*[*_]+)?[ \t]*:(?:[*_]+)?[ \t]*(.*)$/gim;
const CONFIDENCE = /confidence(?:[ \t]*[*_]+)?[ \t]*:(?:[ \t]*[*_]+)?[ \t]*(\d{1,3}(?:\.\d+)?)[ \t]*%?/gi;

/**
 * The answer and confidence a response states: the last `Exact Answer:` / `Final Answer:` / `Answer:` line, and the
 * last `Confidence: NN%` (a percentage, so `Confidence: 1` is 1%; above 100 is no confidence).
 */
export function parseStatedAnswer(response: string): StatedAnswer {
  const out: StatedAnswer = {};
  for (const m of response.matchAll(ANSWER_LINE)) {
    const a = (m[1] ?? '').trim();
    if (a !== '') out.answer = a;
  }
  for (const m of response.matchAll(CONFIDENCE)) {
    const pct = Number(m[1]);
    if (pct >= 0 && pct <= 100) out.confidence = pct / 100;
  }
  return out;
}

/** A string as the rule check compares it. */
export function normalizeAnswer(s: string): string {
  let t = s.normalize('NFKC').trim();
  // Markup models put around a final answer: bold, inline math, quotes, a trailing period.
  for (;;) {
    const before = t;
    t = t.replace(/^[*_]+|[*_]+$/g, '').replace(/^\$+(.*?)\$+$/s, '$1').replace(/^["'`“‘](.*)["'`”’]$/s, '$1').replace(/\.$/, '').trim();
    if (t === before) break;
  }
  return t.replace(/\s+/g, ' ').toLowerCase();
}

/** The choice letter of a multiple-choice answer (`B`, `(B)`, `B.`, `B) 42`), if it starts with one. */
export function choiceLetter(answer: string): string | undefined {
  const m = /^\(?([A-Za-z])\)?(?:[.):]|\s|$)/.exec(normalizeAnswer(answer).trimStart());
  return m?.[1]?.toUpperCase();
}

/** The rule check's verdict: whether the stated answer is the reference, and what it read as the answer. */
export interface RuleVerdict {
  correct: boolean;
  /** The stated answer (the whole response when it states none). */
  extracted: string;
}

/** The rule check of `response` against `question`'s reference (see the module comment). */
export function ruleCheck(question: Pick<Question, 'answer' | 'answerType'>, response: string): RuleVerdict {
  const extracted = parseStatedAnswer(response).answer ?? response.trim();
  if (question.answerType === 'multipleChoice') {
    const reference = choiceLetter(question.answer);
    // A reference that is a letter is compared by letter; otherwise (a choice written out) as an exact answer.
    if (reference !== undefined && normalizeAnswer(question.answer).length <= 3) return { correct: choiceLetter(extracted) === reference, extracted };
  }
  return { correct: normalizeAnswer(extracted) === normalizeAnswer(question.answer), extracted };
}
