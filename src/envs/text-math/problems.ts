import type { Rng } from '../../core/rng.js';
import { evaluate, num, op, render, type MathExpr, type MathOp } from './expression.js';

/**
 * Procedural problem generators for `gymflow/text-math-v0`, one per difficulty level. Each returns the
 * problem text and its structured form (an expression tree); the answer is always exact because the
 * tree is evaluated over fractions.
 *
 * - Level 1: one operation on integers (`37 × 8`, `7 ÷ 4`).
 * - Level 2: two operations where precedence or parentheses matter (`3 + 4 × 5`, `(9 - 2) ÷ 4`).
 * - Level 3: word problems of two or three steps: shopping, rates, sharing.
 * - Level 4: multi-step word problems with fractions and percentages.
 */

/** A difficulty level. */
export type MathLevel = 1 | 2 | 3 | 4;

/** All levels, easiest first. */
export const MATH_LEVELS: readonly MathLevel[] = [1, 2, 3, 4];

/** A generated problem. */
export interface MathProblem {
  /** Template family, e.g. `arithmetic`, `shopping-change`, `percent-chain`. */
  kind: string;
  /** The problem as the agent reads it. */
  question: string;
  /** Its structured form; the answer is `evaluate(expr)`. */
  expr: MathExpr;
}

const NAMES = ['Mia', 'Omar', 'Lena', 'Kofi', 'Ines', 'Ravi', 'Yuki', 'Tomas', 'Ada', 'Noor', 'Felix', 'Zara'];
const ITEMS = ['notebook', 'pencil', 'apple', 'candle', 'mug', 'ticket', 'sticker', 'lemon', 'battery', 'postcard'];
const THINGS = ['marbles', 'cards', 'stamps', 'shells', 'coins', 'beads', 'cookies', 'seeds'];
const MACHINES: readonly [string, string][] = [
  ['machine', 'bottles'],
  ['printer', 'pages'],
  ['bakery oven', 'loaves'],
  ['pump', 'litres'],
];

/** Draws until `accept` holds; generators only use it with acceptance rates far above 1%. */
function draw<T>(rng: Rng, make: (rng: Rng) => T, accept: (value: T) => boolean): T {
  for (let i = 0; i < 1000; i++) {
    const value = make(rng);
    if (accept(value)) return value;
  }
  throw new RangeError('text-math: problem generator rejected 1000 draws in a row');
}

function level1(rng: Rng): MathProblem {
  const operator = rng.pick<MathOp>(['+', '-', '×', '÷']);
  let expr: MathExpr;
  switch (operator) {
    case '+':
    case '-': {
      const a = rng.next() < 0.2 ? -rng.int(2, 99) : rng.int(2, 999);
      expr = op(operator, num(a), num(rng.int(2, 999)));
      break;
    }
    case '×':
      expr = op('×', num(rng.next() < 0.2 ? -rng.int(2, 30) : rng.int(2, 30)), num(rng.int(2, 40)));
      break;
    case '÷': {
      const divisor = rng.int(2, 16);
      // Half the divisions are exact, half leave a fraction such as 7/4.
      const dividend = rng.next() < 0.5 ? divisor * rng.int(2, 40) : rng.int(2, 99);
      expr = op('÷', num(dividend), num(divisor));
      break;
    }
  }
  return { kind: 'arithmetic', question: `Compute ${render(expr)}.`, expr };
}

function level2(rng: Rng): MathProblem {
  const expr = draw(
    rng,
    (r) => {
      const ops: MathOp[] = ['+', '-', '×', '÷'];
      const o1 = r.pick(ops);
      const o2 = r.pick(ops);
      const leaf = (): MathExpr => num(r.next() < 0.15 ? -r.int(1, 9) : r.int(1, 20));
      const [a, b, c] = [leaf(), leaf(), leaf()];
      return r.next() < 0.5 ? op(o2, op(o1, a, b), c) : op(o1, a, op(o2, b, c));
    },
    (e) => {
      // Reject divisions by zero and shapes where one operator does not interact with the other.
      try {
        evaluate(e);
      } catch {
        return false;
      }
      if (e.kind !== 'op') return false;
      const rank = (o: MathOp): number => (o === '+' || o === '-' ? 1 : 2);
      if (e.left.kind === 'op') return rank(e.left.op) !== rank(e.op);
      if (e.right.kind === 'op') return rank(e.right.op) !== rank(e.op) || e.op === '-' || e.op === '÷';
      return false;
    },
  );
  return { kind: 'precedence', question: `Compute ${render(expr)}.`, expr };
}

function level3(rng: Rng): MathProblem {
  const name = rng.pick(NAMES);
  const template = rng.int(0, 4);
  switch (template) {
    case 0: {
      const [item, item2] = rng.shuffle(ITEMS);
      const q = rng.int(2, 6);
      const p = rng.int(2, 9);
      const p2 = rng.int(1, 9);
      const bill = [20, 50, 100].find((b) => b >= q * p + p2) ?? 100;
      return {
        kind: 'shopping-change',
        question: `${name} buys ${q} ${item}s at ${p} dollars each and one ${item2} for ${p2} dollars, paying with a ${bill}-dollar bill. How much change, in dollars, does ${name} get?`,
        expr: op('-', num(bill), op('+', op('×', num(q), num(p)), num(p2))),
      };
    }
    case 1: {
      const [item1, item2] = rng.shuffle(ITEMS);
      const [q1, p1, q2, p2] = [rng.int(2, 9), rng.int(2, 15), rng.int(2, 9), rng.int(2, 15)];
      return {
        kind: 'shopping-total',
        question: `${name} buys ${q1} ${item1}s at ${p1} dollars each and ${q2} ${item2}s at ${p2} dollars each. How many dollars does ${name} spend in total?`,
        expr: op('+', op('×', num(q1), num(p1)), op('×', num(q2), num(p2))),
      };
    }
    case 2: {
      const [machine, unit] = rng.pick(MACHINES);
      const r = rng.int(3, 40);
      const h = rng.int(1, 5);
      const m = rng.int(1, 59);
      return {
        kind: 'rate-time',
        question: `A ${machine} produces ${r} ${unit} per minute. How many ${unit} does it produce in ${h} hour${h > 1 ? 's' : ''} and ${m} minute${m > 1 ? 's' : ''}?`,
        expr: op('×', num(r), op('+', op('×', num(h), num(60)), num(m))),
      };
    }
    case 3: {
      const [v1, t1, v2, t2] = [rng.int(4, 12) * 10, rng.int(1, 5), rng.int(4, 12) * 5, rng.int(1, 4)];
      return {
        kind: 'rate-distance',
        question: `A train travels at ${v1} km/h for ${t1} hour${t1 > 1 ? 's' : ''}, then at ${v2} km/h for ${t2} hour${t2 > 1 ? 's' : ''}. How many kilometres does it travel in total?`,
        expr: op('+', op('×', num(v1), num(t1)), op('×', num(v2), num(t2))),
      };
    }
    default: {
      const things = rng.pick(THINGS);
      const n = rng.int(2, 8);
      const each = rng.int(4, 15);
      const give = rng.int(1, each - 1);
      return {
        kind: 'sharing',
        question: `${n} friends share ${n * each} ${things} equally. Then each friend gives ${give} of their ${things} to a younger sibling. How many ${things} does each friend have left?`,
        expr: op('-', op('÷', num(n * each), num(n)), num(give)),
      };
    }
  }
}

function gcdInt(a: number, b: number): number {
  return b === 0 ? Math.abs(a) : gcdInt(b, a % b);
}

/** A reduced fraction a/b with 0 < a < b and b in [minDen, maxDen]. */
function properFraction(rng: Rng, minDen: number, maxDen: number): [number, number] {
  return draw(
    rng,
    (r) => {
      const den = r.int(minDen, maxDen);
      return [r.int(1, den - 1), den] as [number, number];
    },
    ([a, b]) => gcdInt(a, b) === 1,
  );
}

function percent(p: number): MathExpr {
  return num(p, 100);
}

function level4(rng: Rng): MathProblem {
  const name = rng.pick(NAMES);
  const template = rng.int(0, 4);
  switch (template) {
    case 0: {
      // Price up u %, then down d %: p × (100+u)/100 × (100-d)/100, drawn so the result is whole dollars.
      const [p, u, d] = draw(
        rng,
        (r) => [r.int(2, 40) * 10, r.pick([5, 10, 15, 20, 25, 30, 40, 50]), r.pick([5, 10, 15, 20, 25, 30, 40])] as const,
        ([p0, u0, d0]) => (p0 * (100 + u0) * (100 - d0)) % 10000 === 0,
      );
      return {
        kind: 'percent-chain',
        question: `A jacket costs ${p} dollars. Its price rises by ${u}%, and then the new price is reduced by ${d}%. What is the final price in dollars?`,
        expr: op('×', op('×', num(p), op('+', num(1), percent(u))), op('-', num(1), percent(d))),
      };
    }
    case 1: {
      const [a, b] = properFraction(rng, 3, 9);
      const [c, d] = properFraction(rng, 2, 6);
      return {
        kind: 'fraction-remaining',
        question: `${name} reads ${a}/${b} of a book on Monday and ${c}/${d} of the remaining pages on Tuesday. What fraction of the book is still unread?`,
        expr: op('×', op('-', num(1), num(a, b)), op('-', num(1), num(c, d))),
      };
    }
    case 2: {
      // Per-batch amounts may be improper (3/2 cup) but are always written reduced.
      const [a, b] = draw(
        rng,
        (r) => {
          const den = r.pick([2, 3, 4, 8]);
          return [r.int(1, den + 2), den] as const;
        },
        ([a0, b0]) => gcdInt(a0, b0) === 1,
      );
      const n = rng.int(2, 9);
      const [c, d] = properFraction(rng, 2, 4);
      return {
        kind: 'recipe-scaling',
        question: `A recipe needs ${a}/${b} cup of sugar per batch. ${name} bakes ${n} batches and uses ${c}/${d} cup more for the icing. How many cups of sugar does ${name} use in total?`,
        expr: op('+', op('×', num(a, b), num(n)), num(c, d)),
      };
    }
    case 3: {
      const [students, p, a, b] = draw(
        rng,
        (r) => {
          const den = r.pick([2, 3, 4, 5]);
          return [r.int(12, 40), r.pick([20, 25, 40, 50, 60, 75]), r.int(1, den - 1), den] as const;
        },
        ([s, p0, a0, b0]) => (s * p0 * a0) % (100 * b0) === 0,
      );
      return {
        kind: 'percent-of-fraction',
        question: `In a class of ${students} students, ${p}% play football, and ${a}/${b} of the football players also play chess. How many students play both football and chess?`,
        expr: op('×', op('×', num(students), percent(p)), num(a, b)),
      };
    }
    default: {
      const [salary, a, b, rent] = draw(
        rng,
        (r) => {
          const den = r.pick([4, 5, 8, 10]);
          return [r.int(8, 40) * 100, r.int(1, 3), den, r.pick([20, 25, 30, 40, 50])] as const;
        },
        ([s, a0, b0, r0]) => a0 < b0 && (s * (b0 - a0) * r0) % (100 * b0) === 0,
      );
      return {
        kind: 'savings',
        question: `${name} earns ${salary} dollars a month, saves ${a}/${b} of it, and spends ${rent}% of the rest on rent. How many dollars are left after saving and paying rent?`,
        expr: op('×', op('-', num(salary), op('×', num(salary), num(a, b))), op('-', num(1), percent(rent))),
      };
    }
  }
}

/** Generates one problem of `level` from `rng` (deterministic for a given RNG state). */
export function generateProblem(level: MathLevel, rng: Rng): MathProblem {
  switch (level) {
    case 1:
      return level1(rng);
    case 2:
      return level2(rng);
    case 3:
      return level3(rng);
    case 4:
      return level4(rng);
  }
}
