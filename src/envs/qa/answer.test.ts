import { describe, expect, it } from 'vitest';
import { choiceLetter, normalizeAnswer, parseStatedAnswer, ruleCheck } from './answer.js';

describe('parseStatedAnswer', () => {
  it("reads HLE's format: the exact answer and the confidence as a share", () => {
    expect(parseStatedAnswer('Explanation: 91 = 7 x 13.\nExact Answer: 97\nConfidence: 85%')).toEqual({ answer: '97', confidence: 0.85 });
    expect(parseStatedAnswer('Explanation: group 18.\nAnswer: B\nConfidence: 100%')).toEqual({ answer: 'B', confidence: 1 });
  });

  it('takes the last answer line and tolerates markdown; a confidence is a percentage, above 100 none', () => {
    expect(parseStatedAnswer('Answer: maybe 5?\n...\n**Final Answer:** 6\n**Confidence:** 72.5 %')).toEqual({ answer: '6', confidence: 0.725 });
    expect(parseStatedAnswer('Exact Answer: 4\nConfidence: 1')).toEqual({ answer: '4', confidence: 0.01 });
    expect(parseStatedAnswer('Exact Answer: 4\nConfidence: 250%')).toEqual({ answer: '4' });
    expect(parseStatedAnswer('It is 4, I think.')).toEqual({});
  });
});

describe('normalizeAnswer and choiceLetter', () => {
  it('drops case, space, emphasis, inline math, quotes and a final period', () => {
    expect(normalizeAnswer('  **Canberra.** ')).toBe('canberra');
    expect(normalizeAnswer('$x^2 +  1$')).toBe('x^2 + 1');
    expect(normalizeAnswer('"New  York"')).toBe('new york');
    expect(normalizeAnswer('ＡＢＣ')).toBe('abc');
  });

  it('reads a choice letter however it is written, and no letter from a word', () => {
    for (const a of ['B', 'b', '(B)', 'B.', 'B) Argon', 'B. Argon', '**B**']) expect(choiceLetter(a)).toBe('B');
    expect(choiceLetter('Argon')).toBeUndefined();
  });
});

describe('ruleCheck', () => {
  const exact = { answer: 'Canberra', answerType: 'exactMatch' } as const;
  const choice = { answer: 'B', answerType: 'multipleChoice' } as const;

  it('matches an exact answer after normalising, and reads the whole response when it states no answer', () => {
    expect(ruleCheck(exact, 'Explanation: purpose-built.\nExact Answer: canberra.\nConfidence: 90%')).toEqual({ correct: true, extracted: 'canberra.' });
    expect(ruleCheck(exact, 'Exact Answer: Sydney')).toEqual({ correct: false, extracted: 'Sydney' });
    expect(ruleCheck(exact, ' Canberra ')).toEqual({ correct: true, extracted: 'Canberra' });
    // Strict: an equivalent answer the judge would accept is not an exact match.
    expect(ruleCheck({ answer: '0.5', answerType: 'exactMatch' }, 'Exact Answer: 1/2').correct).toBe(false);
  });

  it('compares multiple-choice answers by their letter', () => {
    expect(ruleCheck(choice, 'Answer: B. Argon').correct).toBe(true);
    expect(ruleCheck(choice, 'Answer: (b)').correct).toBe(true);
    expect(ruleCheck(choice, 'Answer: A').correct).toBe(false);
    expect(ruleCheck(choice, 'Answer: Argon').correct).toBe(false);
    // A reference written out is compared as an exact answer.
    expect(ruleCheck({ answer: 'Argon', answerType: 'multipleChoice' }, 'Answer: argon').correct).toBe(true);
  });
});
