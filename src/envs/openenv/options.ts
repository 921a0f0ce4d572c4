import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import { formatZodIssues } from '../../core/trajectory.js';
import { TOOL_CATEGORIES } from '../../core/types.js';

/** Default limit of one request of an episode (OpenEnv's own client waits 60 s). */
export const REQUEST_TIMEOUT_MS = 60_000;
/** Default limit of opening a session. */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The options of an OpenEnv environment (`make('gymflow/openenv-v0', { kwargs })`). Only `url` is needed; the rest
 * say how to read a server that is not a gymflow server (a gymflow server describes itself).
 */
export const OpenEnvOptionsSchema = z.strictObject({
  /** The server: `http://HOST:PORT` (or `ws://…`, `HOST:PORT`). */
  url: z.string().min(1),
  /** The one tool's name when the action schema is an object of fields. Default `act`. */
  toolName: z.string().min(1).optional(),
  /** That tool's category. Default `submit` (it is how the episode ends). */
  category: z.enum(TOOL_CATEGORIES).optional(),
  /** The observation field that is the observation text. Default: the only string field, else the whole observation as JSON. */
  observationField: z.string().min(1).optional(),
  /** The last reward at or above which an episode the server ended counts as a success. Default 1. */
  successThreshold: z.number().finite().default(1),
  /** The domain profile. Default: a gymflow server's domain, else `generic`. */
  domain: z.string().min(1).optional(),
  /** Limit of each request (reset, step, state) in ms; past it the episode ends truncated, reason `timeout`. Default 60 s. */
  timeoutMs: z.number().int().positive().default(REQUEST_TIMEOUT_MS),
  /** Limit of connecting (and of each request that describes the server) in ms. Default 10 s. */
  connectTimeoutMs: z.number().int().positive().default(CONNECT_TIMEOUT_MS),
  /**
   * Task lists for a server that has none (any but a gymflow server): `train` tasks reset with seeds 0…train−1,
   * `heldout` tasks with seeds 1,000,000…; the server's seed must choose the task. Default: no task list.
   */
  tasks: z.strictObject({ train: z.number().int().nonnegative().default(0), heldout: z.number().int().nonnegative().default(0) }).optional(),
});

/** Parsed {@link OpenEnvOptionsSchema}. */
export type OpenEnvOptions = z.infer<typeof OpenEnvOptionsSchema>;
/** What a caller passes: {@link OpenEnvOptionsSchema}'s input. */
export type OpenEnvOptionsInput = z.input<typeof OpenEnvOptionsSchema>;

/** Parses an environment's kwargs; a {@link ConfigError} names `where` and each wrong option. */
export function parseOpenEnvOptions(kwargs: unknown, where: string): OpenEnvOptions {
  if (kwargs !== null && typeof kwargs === 'object' && (kwargs as { url?: unknown }).url === undefined) {
    throw new ConfigError(`${where}: needs the OpenEnv server's address: make('${where}', { kwargs: { url: 'http://HOST:PORT' } })`);
  }
  const r = OpenEnvOptionsSchema.safeParse(kwargs);
  if (r.success) return r.data;
  throw new ConfigError(`${where}: ${formatZodIssues(r.error, 'kwargs').join('; ')}`);
}
