import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import { parseOpenAISpec } from '../../core/model-spec.js';
import { ModelUser } from './model-user.js';
import { ScriptedUser } from './scripted-user.js';
import type { SimulatedUser } from './user.js';
import { defined } from '../../core/defined.js';

/**
 * Choosing a conversation env's simulated user through the env's keyword arguments:
 *
 * - `user: 'scripted'` (the default): the deterministic {@link ScriptedUser};
 * - `user: 'openai:MODEL[@BASE_URL]'`: a {@link ModelUser} on an OpenAI-compatible server, the same form as
 *   an agent spec (`openai:gpt-4o`, `openai:Qwen/Qwen2.5-7B-Instruct@http://localhost:8000/v1`); the key
 *   is `OPENAI_API_KEY` (any value, e.g. `EMPTY`, for a local server without one);
 * - `user: 'anthropic:MODEL[@BASE_URL]'`: the Anthropic Messages API; the key is `ANTHROPIC_API_KEY`.
 *
 * `userApiKey` passes a key directly; `userTemperature`, `userMaxTokens`, `userTimeoutMs` and
 * `userMaxRetries` tune the model user.
 *
 * @example
 * ```ts
 * const env = make('gymflow/conversation-v0', { kwargs: { user: 'openai:gpt-4o-mini', userTimeoutMs: 30_000 } });
 * ```
 */

/** The user options every conversation env accepts among its keyword arguments. */
export const UserOptionsSchema = z.object({
  /** `scripted` (default), `openai:MODEL[@BASE_URL]` or `anthropic:MODEL[@BASE_URL]`. */
  user: z.string().min(1).default('scripted'),
  /** The model server's key; default the provider's env var. */
  userApiKey: z.string().min(1).optional(),
  userTemperature: z.number().min(0).max(2).optional(),
  userMaxTokens: z.number().int().positive().optional(),
  /** Deadline of one request to the user's model, in ms. */
  userTimeoutMs: z.number().int().positive().optional(),
  /** Retries of a failed request to the user's model (default 4). */
  userMaxRetries: z.number().int().min(0).max(20).optional(),
});

/** Parsed user options. */
export type UserOptions = z.output<typeof UserOptionsSchema>;

/** The forms a user spec takes, for error messages and docs. */
export const USER_SPECS = ['scripted', 'openai:MODEL[@BASE_URL]', 'anthropic:MODEL[@BASE_URL]'] as const;

function apiKey(options: UserOptions, env: Record<string, string | undefined>, name: string, hint: string): string {
  const key = options.userApiKey ?? env[name];
  if (key === undefined || key.trim() === '') throw new ConfigError(`user '${options.user}' needs an API key: set ${name}${hint} or pass userApiKey`);
  return key;
}

/**
 * Builds the simulated user the options name (see the module comment). Throws a `ConfigError` for an
 * unknown spec (listing the forms) or a missing key (naming the env var).
 */
export function createUser(options: UserOptions, env: Record<string, string | undefined> = process.env): SimulatedUser {
  return createSimulatedUser(options, () => new ScriptedUser(), env);
}

/**
 * {@link createUser} for a domain whose scripted users are its own (`scripted` builds one with `scripted()`,
 * a discussion's participant, say); a model spec builds a {@link ModelUser} as for every domain.
 */
export function createSimulatedUser<S>(options: UserOptions, scripted: () => SimulatedUser<S>, env: Record<string, string | undefined> = process.env): SimulatedUser<S> {
  const spec = options.user.trim();
  if (spec === 'scripted') return scripted();
  const tuning = {
    ...defined({
      temperature: options.userTemperature,
      maxTokens: options.userMaxTokens,
      timeoutMs: options.userTimeoutMs,
      retry: options.userMaxRetries !== undefined ? { maxRetries: options.userMaxRetries, baseDelayMs: 500, maxDelayMs: 20_000 } : undefined,
    }),
  };
  if (spec.startsWith('openai:')) {
    const { model, baseURL } = parseOpenAISpec(spec.slice('openai:'.length), 'user spec');
    const key = apiKey(options, env, 'OPENAI_API_KEY', ' (any value, e.g. EMPTY, for a local server without --api-key)');
    return new ModelUser({ provider: 'openai', model, apiKey: key, ...defined({ baseURL }), ...tuning });
  }
  if (spec.startsWith('anthropic:')) {
    const rest = spec.slice('anthropic:'.length);
    const at = rest.search(/@https?:\/\//);
    const model = (at < 0 ? rest : rest.slice(0, at)).trim();
    if (model === '') throw new ConfigError(`user spec '${spec}' names no model; use anthropic:MODEL or anthropic:MODEL@http://host`);
    const baseURL = at < 0 ? undefined : rest.slice(at + 1).trim().replace(/\/+$/, '');
    if (baseURL !== undefined && !URL.canParse(baseURL)) throw new ConfigError(`user spec '${spec}': '${baseURL}' is not a valid URL`);
    const key = apiKey(options, env, 'ANTHROPIC_API_KEY', '');
    return new ModelUser({ provider: 'anthropic', model, apiKey: key, ...defined({ baseURL }), ...tuning });
  }
  throw new ConfigError(`unknown user '${spec}': expected one of ${USER_SPECS.join(', ')}`);
}
