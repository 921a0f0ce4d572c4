import { ConfigError } from '../../core/errors.js';
import { isRegistered, parseEnvId, register, spec, type EnvFactory } from '../../core/registry.js';
import { OpenEnvEnv } from './env.js';
import { parseOpenEnvOptions, type OpenEnvOptionsInput } from './options.js';
import { OPENENV_VARIABLE } from './variable.js';
import { describeOpenEnv, describeOpenEnvSync, openEnvUrls, type OpenEnvServerInfo } from './server-info.js';
import { defined } from '../../core/defined.js';

/** The id of the OpenEnv client environment: `make(OPENENV_ENV_ID, { kwargs: { url } })`. */
export const OPENENV_ENV_ID = 'gymflow/openenv-v0';
/** Its step limit (a gymflow server's own limit applies as well). */
export const OPENENV_MAX_STEPS = 100;
export { OPENENV_VARIABLE };

// Servers described in this process, by address: the description (tools, tasks) is read once, and a server
// described asynchronously (`registerOpenEnv`) is not asked again synchronously.
const described = new Map<string, OpenEnvServerInfo>();

/**
 * The factory of an OpenEnv environment: kwargs are {@link OpenEnvOptionsInput} (`url` at least). The first
 * environment made for a server describes it, synchronously (`describeOpenEnvSync`) unless `registerOpenEnv` did.
 */
export function openEnvFactory(id: string): EnvFactory {
  return (kwargs) => {
    const options = parseOpenEnvOptions(kwargs, id);
    const { baseUrl } = openEnvUrls(options.url, `${id}: kwargs.url`);
    let info = described.get(baseUrl);
    if (info === undefined) {
      info = describeOpenEnvSync(baseUrl, { timeoutMs: options.connectTimeoutMs });
      described.set(baseUrl, info);
    }
    return new OpenEnvEnv(info, options);
  };
}

/**
 * Registers `gymflow/openenv-v0` (an OpenEnv server given by `kwargs.url`) and one `openenv/NAME-v0` for each
 * entry of `GYMFLOW_OPENENV` (`NAME=URL`, comma-separated). Idempotent. A malformed entry is a {@link ConfigError}.
 */
export function registerOpenEnvEnvs(variables: Record<string, string | undefined> = process.env): void {
  if (!isRegistered(OPENENV_ENV_ID)) {
    register(OPENENV_ENV_ID, openEnvFactory(OPENENV_ENV_ID), {
      domain: 'generic',
      description: 'An environment on an OpenEnv server (kwargs.url): tools from its action schema, episodes over its WebSocket session.',
      maxEpisodeSteps: OPENENV_MAX_STEPS,
    });
  }
  // Those registered before this call are left as they are (an entry named twice is an error, as registering twice is).
  const entries = parseOpenEnvVariable(variables[OPENENV_VARIABLE]).filter(({ id }) => !isRegistered(id));
  for (const { id, url } of entries) {
    register(id, openEnvFactory(id), {
      domain: 'generic',
      description: `The OpenEnv server at ${url} (${OPENENV_VARIABLE}).`,
      maxEpisodeSteps: OPENENV_MAX_STEPS,
      kwargs: { url },
    });
  }
}

/**
 * The entries of `GYMFLOW_OPENENV`: `counter=http://127.0.0.1:8000,echo=https://host` →
 * `[{ id: 'openenv/counter-v0', url: … }, …]`. Empty or unset: none.
 */
export function parseOpenEnvVariable(value: string | undefined): { id: string; url: string }[] {
  if (value === undefined || value.trim() === '') return [];
  return value.split(',').map((entry) => {
    const m = /^\s*([^=\s]+)\s*=\s*(\S+)\s*$/.exec(entry);
    if (m === null) throw new ConfigError(`${OPENENV_VARIABLE}: entry ${JSON.stringify(entry)}: expected NAME=URL (e.g. counter=http://127.0.0.1:8000)`);
    const id = `openenv/${m[1] as string}-v0`;
    try {
      parseEnvId(id);
    } catch {
      throw new ConfigError(`${OPENENV_VARIABLE}: entry ${JSON.stringify(entry)}: '${m[1] as string}' cannot name an environment (lower-case letters, digits, '.', '_', '-')`);
    }
    openEnvUrls(m[2] as string, `${OPENENV_VARIABLE}: entry ${JSON.stringify(entry)}`);
    return { id, url: m[2] as string };
  });
}

/**
 * Describes the OpenEnv server at `options.url` (asynchronously: the server may run in this process) and registers
 * it as `id`, with `options` as the spec's kwargs: `make(id)` then plays on it. The spec takes the server's
 * description, and a gymflow server's domain and step limit; when that server's environment is registered here
 * too, its agents (the `expert`) come along. Returns the description.
 *
 * @example
 * ```ts
 * await registerOpenEnv('openenv/guess-v0', { url: 'http://127.0.0.1:8000', observationField: 'message' });
 * const env = make('openenv/guess-v0');
 * ```
 */
export async function registerOpenEnv(id: string, options: OpenEnvOptionsInput, registration: { replace?: boolean } = {}): Promise<OpenEnvServerInfo> {
  const parsed = parseOpenEnvOptions(options, id);
  const info = await describeOpenEnv(parsed.url, { timeoutMs: parsed.connectTimeoutMs });
  described.set(info.baseUrl, info);
  const local = info.gymflow !== undefined && isRegistered(info.gymflow.env_id) ? spec(info.gymflow.env_id).agents : undefined;
  register(
    id,
    openEnvFactory(id),
    {
      domain: parsed.domain ?? info.gymflow?.domain ?? 'generic',
      description: info.metadata.description || `The OpenEnv server at ${info.baseUrl}.`,
      maxEpisodeSteps: info.gymflow?.max_episode_steps ?? OPENENV_MAX_STEPS,
      kwargs: { ...options },
      ...defined({ agents: local }),
    },
    registration,
  );
  return info;
}
