import { InvalidArgumentError } from 'commander';

/** Commander parser for an integer option; the error names the option's value. */
export function parseInteger(value: string): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`expected an integer, got '${value}'`);
  return n;
}

/** Commander parser for a positive integer option. */
export function parsePositiveInteger(value: string): number {
  const n = parseInteger(value);
  if (n <= 0) throw new InvalidArgumentError(`expected a positive integer, got '${value}'`);
  return n;
}

/** Commander parser for an integer option of 0 or more (counts where 0 means "as many as there are cores"). */
export function parseNonNegativeInteger(value: string): number {
  const n = parseInteger(value);
  if (n < 0) throw new InvalidArgumentError(`expected 0 or a positive integer, got '${value}'`);
  return n;
}

/** Commander parser for a TCP port (1-65535). */
export function parsePort(value: string): number {
  const n = parsePositiveInteger(value);
  if (n > 65535) throw new InvalidArgumentError(`expected a port (1-65535), got '${value}'`);
  return n;
}

/** Prints a value as pretty JSON on stdout (the `--json` output of every command). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
