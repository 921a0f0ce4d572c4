/**
 * Exact rational arithmetic on bigints, so answers such as `3/4` or `-7` are compared exactly and never
 * through floating point (0.1 + 0.2 is not 3/10 in binary floating point).
 */

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

function toBigInt(n: bigint | number, what: string): bigint {
  if (typeof n === 'bigint') return n;
  if (!Number.isSafeInteger(n)) throw new RangeError(`Fraction: ${what} must be a safe integer, got ${n}`);
  return BigInt(n);
}

/**
 * An exact rational number, always in lowest terms with a positive denominator.
 *
 * @example
 * ```ts
 * Fraction.of(6, 8).toString();                       // '3/4'
 * Fraction.of(1, 2).add(Fraction.of(1, 4)).toString(); // '3/4'
 * Fraction.of(-14, 2).toString();                     // '-7'
 * ```
 */
export class Fraction {
  /** Numerator; carries the sign. */
  readonly num: bigint;
  /** Denominator; always positive. */
  readonly den: bigint;

  private constructor(num: bigint, den: bigint) {
    this.num = num;
    this.den = den;
  }

  /** `num/den` reduced to lowest terms. Throws a `RangeError` for a zero denominator. */
  static of(num: bigint | number, den: bigint | number = 1n): Fraction {
    let n = toBigInt(num, 'numerator');
    let d = toBigInt(den, 'denominator');
    if (d === 0n) throw new RangeError(`Fraction: zero denominator (${n}/0)`);
    if (d < 0n) {
      n = -n;
      d = -d;
    }
    const g = gcd(n, d);
    return g > 1n ? new Fraction(n / g, d / g) : new Fraction(n, d);
  }

  /** The integer `n` as a fraction. */
  static int(n: bigint | number): Fraction {
    return Fraction.of(n, 1n);
  }

  /** `this + other`. */
  add(other: Fraction): Fraction {
    return Fraction.of(this.num * other.den + other.num * this.den, this.den * other.den);
  }

  /** `this − other`. */
  sub(other: Fraction): Fraction {
    return Fraction.of(this.num * other.den - other.num * this.den, this.den * other.den);
  }

  /** `this × other`. */
  mul(other: Fraction): Fraction {
    return Fraction.of(this.num * other.num, this.den * other.den);
  }

  /** `this ÷ other`; throws a `RangeError` when `other` is zero. */
  div(other: Fraction): Fraction {
    if (other.num === 0n) throw new RangeError(`Fraction: division of ${this.toString()} by zero`);
    return Fraction.of(this.num * other.den, this.den * other.num);
  }

  /** `−this`. */
  neg(): Fraction {
    return new Fraction(-this.num, this.den);
  }

  /** Whether both denote the same number (fractions are always reduced, so this is structural). */
  equals(other: Fraction): boolean {
    return this.num === other.num && this.den === other.den;
  }

  /** Whether the value is an integer. */
  isInteger(): boolean {
    return this.den === 1n;
  }

  /** Whether the value is zero. */
  isZero(): boolean {
    return this.num === 0n;
  }

  /** −1, 0 or 1. */
  sign(): -1 | 0 | 1 {
    return this.num < 0n ? -1 : this.num > 0n ? 1 : 0;
  }

  /** The nearest double (for display and tolerance checks only, never for grading). */
  toNumber(): number {
    return Number(this.num) / Number(this.den);
  }

  /** The canonical answer form: an integer (`42`, `-7`) or a reduced fraction (`3/4`, `-5/2`). */
  toString(): string {
    return this.den === 1n ? this.num.toString() : `${this.num}/${this.den}`;
  }
}
