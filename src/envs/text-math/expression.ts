import { Fraction } from './fraction.js';

/**
 * The structured form of a math problem: a binary expression tree over exact fractions. Every task of
 * `gymflow/text-math-v0` carries one; the gold answer is its value, and the expert agent walks it to
 * write its working.
 */

/** The four operations, written as they appear in problem text. */
export type MathOp = '+' | '-' | '×' | '÷';

/** A literal number or an operation on two sub-expressions. */
export type MathExpr =
  | { kind: 'num'; value: Fraction }
  | { kind: 'op'; op: MathOp; left: MathExpr; right: MathExpr };

/** A literal: `num(3)`, `num(3, 4)` for 3/4. */
export function num(n: number, d = 1): MathExpr {
  return { kind: 'num', value: Fraction.of(n, d) };
}

/** An operation node. */
export function op(operator: MathOp, left: MathExpr, right: MathExpr): MathExpr {
  return { kind: 'op', op: operator, left, right };
}

/** Applies one operation exactly. Throws a `RangeError` on division by zero. */
export function apply(operator: MathOp, a: Fraction, b: Fraction): Fraction {
  switch (operator) {
    case '+':
      return a.add(b);
    case '-':
      return a.sub(b);
    case '×':
      return a.mul(b);
    case '÷':
      return a.div(b);
  }
}

/** The exact value of an expression. */
export function evaluate(expr: MathExpr): Fraction {
  return expr.kind === 'num' ? expr.value : apply(expr.op, evaluate(expr.left), evaluate(expr.right));
}

const PRECEDENCE: Record<MathOp, number> = { '+': 1, '-': 1, '×': 2, '÷': 2 };

function renderNumber(value: Fraction, standalone: boolean): string {
  const text = value.toString();
  // A negative or fractional literal inside a larger expression is bracketed so `3 - -2` and
  // `1/2 ÷ 3` cannot be misread.
  return standalone || (value.isInteger() && value.sign() >= 0) ? text : `(${text})`;
}

/**
 * Problem text for an expression with the fewest parentheses that keep its meaning:
 * `3 + 4 × 5`, `(3 + 4) × 5`, `10 - (4 - 1)`, `7 ÷ (-2)`.
 */
export function render(expr: MathExpr): string {
  return renderInner(expr, true);
}

function renderInner(expr: MathExpr, standalone: boolean): string {
  if (expr.kind === 'num') return renderNumber(expr.value, standalone);
  const p = PRECEDENCE[expr.op];
  const wrap = (child: MathExpr, right: boolean): string => {
    const text = renderInner(child, false);
    if (child.kind === 'num') return text;
    const cp = PRECEDENCE[child.op];
    const needs = cp < p || (right && cp === p && (expr.op === '-' || expr.op === '÷'));
    return needs ? `(${text})` : text;
  };
  return `${wrap(expr.left, false)} ${expr.op} ${wrap(expr.right, true)}`;
}
