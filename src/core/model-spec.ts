import { ConfigError } from './errors.js';

/**
 * The model part of the specs that name a model server: `openai:MODEL[@BASE_URL]` for a policy
 * (`src/policy/specs.ts`) and for a simulated user (`src/envs/conversation-kit/user-spec.ts`). Both parts
 * read it the same way, so it lives here.
 */

/**
 * Splits `MODEL[@BASE_URL]`: the URL starts at the first `@http://` or `@https://`, so model names may
 * contain `@`. A URL without a path gets `/v1` (the SDK's base URL includes it). `label` names the spec in
 * errors (`agent spec`, `user spec`).
 *
 * @example
 * parseOpenAISpec('Qwen/Qwen2.5-7B@http://localhost:8000'); // { model: 'Qwen/Qwen2.5-7B', baseURL: 'http://localhost:8000/v1' }
 */
export function parseOpenAISpec(rest: string, label = 'agent spec'): { model: string; baseURL?: string } {
  const at = rest.search(/@https?:\/\//);
  const model = (at < 0 ? rest : rest.slice(0, at)).trim();
  if (model === '') throw new ConfigError(`${label} 'openai:${rest}' names no model; use openai:MODEL or openai:MODEL@http://host:8000/v1`);
  if (at < 0) return { model };
  const raw = rest.slice(at + 1).trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${label} 'openai:${rest}': '${raw}' is not a valid URL`);
  }
  const baseURL = url.pathname === '/' || url.pathname === '' ? `${url.origin}/v1` : raw.replace(/\/+$/, '');
  return { model, baseURL };
}
