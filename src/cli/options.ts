import { InvalidArgumentError, type Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import { make } from '../core/registry.js';
import { defined } from '../core/defined.js';

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

/** Commander parser for a JSON object of an environment's keyword arguments (`make(id, { kwargs })`). */
export function parseKwargs(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new InvalidArgumentError(`expected a JSON object, got '${value}' (${(err as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidArgumentError(`expected a JSON object, got '${value}'`);
  return parsed as Record<string, unknown>;
}

/** The options {@link withEnvKwargsOptions} adds. */
export interface EnvKwargsOpts {
  envKwargs?: Record<string, unknown>;
  user?: string;
}

/**
 * Adds `--env-kwargs <json>` (the environment's keyword arguments) and `--user <spec>` (a conversation env's
 * simulated user: `scripted`, `openai:MODEL[@BASE_URL]`, `anthropic:MODEL[@BASE_URL]`; the same as
 * `--env-kwargs '{"user": SPEC}'`, and it wins over a `user` there). Read them back with {@link envKwargsOf}.
 */
export function withEnvKwargsOptions(command: Command): Command {
  return command
    .option('--env-kwargs <json>', 'keyword arguments of the environment, as a JSON object (e.g. \'{"admissibleActions": true}\')', parseKwargs)
    .option('--user <spec>', "a conversation env's simulated user: scripted | openai:MODEL[@BASE_URL] | anthropic:MODEL[@BASE_URL] (keys from OPENAI_API_KEY / ANTHROPIC_API_KEY)");
}

/** The environment's keyword arguments from {@link withEnvKwargsOptions}' options; undefined when neither was given. */
export function envKwargsOf(opts: EnvKwargsOpts): Record<string, unknown> | undefined {
  if (opts.envKwargs === undefined && opts.user === undefined) return undefined;
  return { ...opts.envKwargs, ...defined({ user: opts.user }) };
}

/**
 * The keyword arguments of {@link envKwargsOf}, checked by making (and closing) the environment with them once,
 * before any episode: one the environment refuses fails naming the options it came from.
 *
 * @param names How the two options are named in the error (the CLI's flags by default).
 * @throws ConfigError `--env-kwargs/--user: …` with the environment's own message.
 */
export async function checkedEnvKwargs(envId: string, opts: EnvKwargsOpts, names: { envKwargs: string; user: string } = { envKwargs: '--env-kwargs', user: '--user' }): Promise<Record<string, unknown> | undefined> {
  const kwargs = envKwargsOf(opts);
  if (kwargs === undefined) return undefined;
  let env;
  try {
    env = make(envId, { kwargs });
  } catch (err) {
    const given = [opts.envKwargs === undefined ? [] : [`${names.envKwargs} '${JSON.stringify(opts.envKwargs)}'`], opts.user === undefined ? [] : [`${names.user} ${opts.user}`]].flat().join(' ');
    throw new ConfigError(`${given}: ${(err as Error).message}`);
  }
  await env.close();
  return kwargs;
}
