import { describe, expect, it } from 'vitest';
import { DEFAULT_PHRASES, questions, ScriptedUser, type ActionGoal, type UserScript } from './scripted-user.js';

// A small script of another domain than retail: a library patron who renews a book, may change their mind,
// asks when the library closes, and asks about someone else's loans.
const renew: ActionGoal = {
  kind: 'action',
  id: 'renew',
  request: ['I want to renew a book.'],
  facts: [{ key: 'book', asked: /\bwhich book\b/i, answers: ['It is "Dune".'] }],
  confirm: [['dune'], ['two weeks']],
  correction: ['No, I want "Dune" renewed for two weeks.'],
};
const returnBook: ActionGoal = { ...renew, id: 'return', request: ['I want to return a book.'], confirm: [['dune'], ['return']], correction: ['No, I want to return "Dune".'] };

function script(overrides: Partial<UserScript> = {}): UserScript {
  return {
    facts: [
      { key: 'card', asked: /library card/i, answers: ['My card number is 4711.', 'It is 4711.'] },
      { key: 'name', asked: /\bname\b/i, answers: ['I am Ada.'] },
    ],
    goals: [
      renew,
      { kind: 'inform', id: 'hours', request: ['When do you close today?'], outputs: ['8 pm'] },
      { kind: 'refuse', id: 'other', request: ["What has my neighbour borrowed?"], accept: /\b(can't|cannot)\b/i, acknowledge: ['Fair enough.'] },
    ],
    patience: 2,
    phrases: DEFAULT_PHRASES,
    ...overrides,
  };
}

function user(s: UserScript = script(), seed = 1): ScriptedUser {
  const u = new ScriptedUser();
  u.start({ instruction: 'hidden', opening: 'Hi! I want to renew a book.', script: s, seed });
  return u;
}

describe('ScriptedUser', () => {
  it('tells a fact only when asked for it, and only the facts asked', () => {
    const u = user();
    const a = u.answer('Hello! How can I help?');
    expect(a.done).toBe(false);
    expect(a.text).not.toContain('4711');
    expect(a.text).toContain('I want to renew a book.');
    expect(u.answer('What is your library card number?').text).toMatch(/4711/);
    const both = u.answer('Your name and library card, please. Which book?').text;
    expect(both).toContain('Dune');
    expect(both).toContain('4711');
    expect(both).toContain('Ada');
  });

  it('says yes only to a confirmation that names the whole action, then moves to its next goal once told it is done', () => {
    const u = user();
    const wrong = u.answer('Shall I renew "Dune" for one week?');
    expect(wrong.text).toBe(renew.correction[0]);
    expect(u.answer('Shall I renew "Dune" for two weeks?').text).toMatch(/^Yes/);
    // A question after the yes that asks for a fact is answered; the report then meets the goal.
    expect(u.answer('Before I do: which book was it again?').text).toContain('Dune');
    const next = u.answer('Done, "Dune" is renewed until June 3. Is there anything else?');
    expect(next.text).toMatch(/When do you close today\?$/);
    expect(u.currentGoal?.id).toBe('hours');
    // An inform goal is met once every output was said; a refuse goal when the agent declines.
    expect(u.answer('We are open all day.').done).toBe(false);
    expect(u.answer('We close at 8 pm.').text).toMatch(/What has my neighbour borrowed\?$/);
    expect(u.answer('Let me look.').done).toBe(false);
    const end = u.answer("Sorry, I can't share another patron's loans.");
    expect(end).toMatchObject({ done: true, end: 'satisfied' });
    expect(end.text).toMatch(/^Fair enough\. /);
  });

  it('changes its mind at the first confirmation when its goal says so', () => {
    const u = user(script({ goals: [{ ...returnBook, changeMind: { say: ['Actually, I would rather renew it.'], to: renew } }] }));
    expect(u.answer('Shall I take the return of "Dune"?').text).toBe('Actually, I would rather renew it.');
    expect(u.currentGoal?.id).toBe('renew');
    expect(u.answer('Shall I take the return of "Dune"?').text).toBe(renew.correction[0]);
    expect(u.answer('Shall I renew "Dune" for two weeks?').text).toMatch(/^Yes/);
    expect(u.answer('Done.')).toMatchObject({ done: true, end: 'satisfied' });
  });

  it('gives up after more unhelpful messages in a row than its patience', () => {
    const u = user();
    expect(u.answer('lorem').done).toBe(false);
    expect(u.answer('ipsum').done).toBe(false);
    // A useful exchange resets the count.
    expect(u.answer('Your name?').done).toBe(false);
    expect(u.answer('dolor').done).toBe(false);
    expect(u.answer('sit').done).toBe(false);
    expect(u.answer('amet')).toMatchObject({ done: true, end: 'gave_up' });
  });

  it('is deterministic for a seed, and its phrasing depends on the seed', () => {
    const say = (seed: number): string[] => {
      const u = user(script(), seed);
      return ['Your library card?', 'lorem', 'Your library card?', 'ipsum'].map((m) => u.answer(m).text);
    };
    expect(say(3)).toEqual(say(3));
    const all = new Set(Array.from({ length: 12 }, (_, s) => say(s).join('|')));
    expect(all.size).toBeGreaterThan(1);
  });

  it('reads the questions of a message', () => {
    expect(questions('Done. Your refund is on its way. Anything else? Bye.')).toEqual(['Anything else?']);
  });
});
