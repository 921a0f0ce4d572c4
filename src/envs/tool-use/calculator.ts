import { InvalidActionError } from '../../core/errors.js';

/**
 * A safe arithmetic evaluator for the `calculator` tool: a tokenizer and a recursive-descent parser
 * that evaluates as it parses. It never uses `eval` or `Function`; only the grammar below is accepted,
 * so input such as `process.exit(1)` is rejected with a message naming the offending position.
 *
 * ```
 * expression := term (('+' | '-') term)*
 * term       := unary (('*' | '/' | '%') unary)*          % is the remainder (as in JavaScript)
 * unary      := ('-' | '+') unary | power
 * power      := primary (('^' | '**') unary)?             right-associative: 2^3^2 = 2^9; -2^2 = -4
 * primary    := NUMBER | NAME | NAME '(' args ')' | '(' expression ')'
 * ```
 *
 * Numbers: `12`, `3.5`, `.5`, `1e3`. Names: `pi`, `e`. Functions: `sqrt(x)`, `abs(x)`, `round(x)`,
 * `round(x, digits)`, `floor(x)`, `ceil(x)`, `min(a, …)`, `max(a, …)`. `×`, `÷` and `−` are read as
 * `*`, `/` and `-`. Positions in messages are 0-based character offsets into the expression.
 */

/** A calculator input error; `position` is the 0-based offset of the problem, when there is one. */
export class CalculatorError extends InvalidActionError {
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(`calculator: ${message}${position === undefined ? '' : ` at position ${position}`}`);
  }
}

/** Longest accepted expression, in characters. */
export const MAX_EXPRESSION_LENGTH = 500;
/** Deepest accepted nesting of parentheses, unary signs and calls (guards the recursion). */
export const MAX_DEPTH = 64;

type Token =
  | { type: 'num'; value: number; pos: number; text: string }
  | { type: 'name'; value: string; pos: number; text: string }
  | { type: 'op'; value: '+' | '-' | '*' | '/' | '%' | '^'; pos: number; text: string }
  | { type: 'lparen' | 'rparen' | 'comma'; pos: number; text: string }
  | { type: 'bad'; pos: number; text: string }
  | { type: 'end'; pos: number; text: string };

type OpSymbol = Extract<Token, { type: 'op' }>['value'];

// Maps, not object literals: a name such as `toString` or `constructor` must not find
// Object.prototype's members.
const OPERATORS: ReadonlyMap<string, OpSymbol> = new Map([
  ['+', '+'],
  ['-', '-'],
  ['\u2212', '-'],
  ['*', '*'],
  ['\u00d7', '*'],
  ['/', '/'],
  ['\u00f7', '/'],
  ['%', '%'],
  ['^', '^'],
]);

const CONSTANTS: ReadonlyMap<string, number> = new Map([
  ['pi', Math.PI],
  ['e', Math.E],
]);

type Fn = (args: number[], pos: number) => number;

function arity(name: string, args: number[], min: number, max: number, pos: number): void {
  if (args.length < min || args.length > max) {
    const expected = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} or ${max}`;
    throw new CalculatorError(`${name}() takes ${expected} argument${expected === '1' ? '' : 's'}, got ${args.length}`, pos);
  }
}

const FUNCTIONS: ReadonlyMap<string, Fn> = new Map(Object.entries({
  sqrt: (args, pos) => {
    arity('sqrt', args, 1, 1, pos);
    const x = args[0] as number;
    if (x < 0) throw new CalculatorError(`sqrt of a negative number (${formatNumber(x)})`, pos);
    return Math.sqrt(x);
  },
  abs: (args, pos) => {
    arity('abs', args, 1, 1, pos);
    return Math.abs(args[0] as number);
  },
  round: (args, pos) => {
    arity('round', args, 1, 2, pos);
    const [x = 0, digits = 0] = args;
    if (!Number.isInteger(digits) || digits < 0 || digits > 12) {
      throw new CalculatorError(`round() digits must be an integer from 0 to 12, got ${formatNumber(digits)}`, pos);
    }
    // Round half away from zero on the decimal value people see (1.005 → 1.01), not on its binary image.
    const factor = 10 ** digits;
    const scaled = Number((Math.abs(x) * factor).toPrecision(15));
    return (Math.sign(x) * Math.round(scaled)) / factor;
  },
  floor: (args, pos) => {
    arity('floor', args, 1, 1, pos);
    return Math.floor(args[0] as number);
  },
  ceil: (args, pos) => {
    arity('ceil', args, 1, 1, pos);
    return Math.ceil(args[0] as number);
  },
  min: (args, pos) => {
    arity('min', args, 1, Infinity, pos);
    return Math.min(...args);
  },
  max: (args, pos) => {
    arity('max', args, 1, Infinity, pos);
    return Math.max(...args);
  },
}));

const KNOWN = `known names: ${[...[...FUNCTIONS.keys()].map((f) => `${f}()`), ...CONSTANTS.keys()].join(', ')}`;

function describe(token: Token): string {
  if (token.type === 'end') return 'end of expression';
  return token.type === 'bad' ? `character '${token.text}'` : `token '${token.text}'`;
}

/**
 * Splits an expression into tokens. A character outside the grammar becomes a final `bad` token, so
 * the parser reports problems in the order they occur (`process.exit` → unknown name `process`).
 */
export function tokenizeExpression(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i] as string;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const number = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(input.slice(i));
    if (number) {
      tokens.push({ type: 'num', value: Number(number[0]), pos: i, text: number[0] });
      i += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(input.slice(i));
    if (name) {
      tokens.push({ type: 'name', value: name[0], pos: i, text: name[0] });
      i += name[0].length;
      continue;
    }
    if (input.startsWith('**', i)) {
      tokens.push({ type: 'op', value: '^', pos: i, text: '**' });
      i += 2;
      continue;
    }
    const op = OPERATORS.get(ch);
    if (op) tokens.push({ type: 'op', value: op, pos: i, text: ch });
    else if (ch === '(') tokens.push({ type: 'lparen', pos: i, text: ch });
    else if (ch === ')') tokens.push({ type: 'rparen', pos: i, text: ch });
    else if (ch === ',') tokens.push({ type: 'comma', pos: i, text: ch });
    else {
      tokens.push({ type: 'bad', pos: i, text: ch });
      break;
    }
    i++;
  }
  tokens.push({ type: 'end', pos: tokens.at(-1)?.type === 'bad' ? i : input.length, text: '' });
  return tokens;
}

class Parser {
  private i = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.i] as Token;
  }

  private take(): Token {
    const token = this.peek();
    if (token.type !== 'end' && token.type !== 'bad') this.i++;
    return token;
  }

  private enter(pos: number): void {
    if (++this.depth > MAX_DEPTH) throw new CalculatorError(`expression nested too deeply (more than ${MAX_DEPTH} levels)`, pos);
  }

  parse(): number {
    const value = this.expression();
    const rest = this.peek();
    if (rest.type !== 'end') throw new CalculatorError(`unexpected ${describe(rest)}`, rest.pos);
    return value;
  }

  private expression(): number {
    let value = this.term();
    for (;;) {
      const t = this.peek();
      if (t.type !== 'op' || (t.value !== '+' && t.value !== '-')) return value;
      this.take();
      const right = this.term();
      value = t.value === '+' ? value + right : value - right;
    }
  }

  private term(): number {
    let value = this.unary();
    for (;;) {
      const t = this.peek();
      if (t.type !== 'op' || (t.value !== '*' && t.value !== '/' && t.value !== '%')) return value;
      this.take();
      const right = this.unary();
      if (t.value === '*') value *= right;
      else if (right === 0) throw new CalculatorError(t.value === '/' ? 'division by zero' : 'remainder by zero', t.pos);
      else value = t.value === '/' ? value / right : value % right;
    }
  }

  private unary(): number {
    const t = this.peek();
    if (t.type === 'op' && (t.value === '-' || t.value === '+')) {
      this.take();
      this.enter(t.pos);
      const value = this.unary();
      this.depth--;
      return t.value === '-' ? -value : value;
    }
    return this.power();
  }

  private power(): number {
    const base = this.primary();
    const t = this.peek();
    if (t.type !== 'op' || t.value !== '^') return base;
    this.take();
    this.enter(t.pos);
    const exponent = this.unary();
    this.depth--;
    const value = base ** exponent;
    if (Number.isNaN(value)) {
      throw new CalculatorError(`${formatNumber(base)} ^ ${formatNumber(exponent)} is not a real number`, t.pos);
    }
    return value;
  }

  private primary(): number {
    const t = this.take();
    switch (t.type) {
      case 'num':
        return t.value;
      case 'lparen': {
        this.enter(t.pos);
        const value = this.expression();
        this.expect('rparen', `missing ')' to close '(' at position ${t.pos}`);
        this.depth--;
        return value;
      }
      case 'name': {
        const fn = FUNCTIONS.get(t.value);
        if (this.peek().type === 'lparen') {
          if (!fn) throw new CalculatorError(`unknown function '${t.value}' (${KNOWN})`, t.pos);
          return this.call(t.value, fn, t.pos);
        }
        const constant = CONSTANTS.get(t.value);
        if (constant !== undefined) return constant;
        if (fn) throw new CalculatorError(`function '${t.value}' needs arguments in parentheses, e.g. ${t.value}(2)`, t.pos);
        throw new CalculatorError(`unknown name '${t.value}' (${KNOWN})`, t.pos);
      }
      default:
        throw new CalculatorError(`unexpected ${describe(t)}`, t.pos);
    }
  }

  private call(name: string, fn: Fn, pos: number): number {
    const open = this.take();
    this.enter(open.pos);
    const args: number[] = [];
    if (this.peek().type !== 'rparen') {
      args.push(this.expression());
      while (this.peek().type === 'comma') {
        this.take();
        args.push(this.expression());
      }
    }
    this.expect('rparen', `missing ')' to close ${name}( at position ${open.pos}`);
    this.depth--;
    return fn(args, pos);
  }

  private expect(type: 'rparen', problem: string): void {
    const t = this.peek();
    if (t.type !== type) {
      throw new CalculatorError(t.type === 'end' ? problem : `unexpected ${describe(t)}; ${problem}`, t.pos);
    }
    this.take();
  }
}

/**
 * Evaluates an arithmetic expression. Throws a {@link CalculatorError} for anything outside the grammar,
 * division by zero, or a result that is not a finite number.
 *
 * @example
 * ```ts
 * calculate('2 + 3 * 4');               // 14
 * calculate('round(42.5 * 0.85, 2)');   // 36.13
 * calculate('1 + (2 * 3))');            // throws "calculator: unexpected token ')' at position 11"
 * ```
 */
export function calculate(expression: string): number {
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    throw new CalculatorError(`expression too long (${expression.length} > ${MAX_EXPRESSION_LENGTH} characters)`);
  }
  if (expression.trim() === '') throw new CalculatorError('empty expression');
  const value = new Parser(tokenizeExpression(expression)).parse();
  if (!Number.isFinite(value)) throw new CalculatorError(`result is not a finite number (${value})`);
  return value;
}

/**
 * A result as the tool prints it: integers exactly, other numbers to 12 significant digits with
 * floating-point noise removed (`0.1 + 0.2` → `0.3`), `-0` as `0`.
 */
export function formatNumber(value: number): string {
  if (Object.is(value, -0)) return '0';
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  return String(Number(value.toPrecision(12)));
}
