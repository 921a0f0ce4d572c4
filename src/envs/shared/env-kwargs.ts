import type { z } from 'zod';
import { ConfigError } from '../../core/errors.js';

/**
 * Parses an environment's keyword arguments with its strict options schema. A {@link ConfigError} names the
 * environment, the first wrong option's path and what is wrong; a misspelt option also lists the known ones.
 *
 * @example
 * this.options = parseEnvKwargs(SANDBOX_ENV_ID, SandboxEnvOptionsSchema, kwargs);
 * // ConfigError: gymflow/sandbox-v0 kwargs $: Unrecognized key: "tims" (known: tasks, sandbox, …)
 */
export function parseEnvKwargs<S extends z.ZodObject>(envId: string, schema: S, kwargs: Record<string, unknown>): z.output<S> {
  const parsed = schema.safeParse(kwargs);
  if (parsed.success) return parsed.data;
  const i = parsed.error.issues[0];
  const keys = i?.code === 'unrecognized_keys' ? ` (known: ${Object.keys(schema.shape).join(', ')})` : '';
  const where = i?.path.length ? `$.${i.path.join('.')}` : '$';
  throw new ConfigError(`${envId} kwargs ${where}: ${i?.message ?? 'invalid'}${keys}`);
}
