import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { RegistryError } from '../errors.js';
import type { DomainProfile } from './profile.js';
import { loadProfileFile, parseProfile } from './profile.js';

const BUILTIN_DIR = fileURLToPath(new URL('./builtin/', import.meta.url));
const profiles = new Map<string, DomainProfile>();
let builtinsLoaded = false;

function ensureBuiltins(): void {
  if (builtinsLoaded) return;
  builtinsLoaded = true;
  for (const file of readdirSync(BUILTIN_DIR).filter((f) => f.endsWith('.json')).sort()) {
    // Their tool schemas are compiled at an environment's first step; profile.test.ts checks them all.
    const p = loadProfileFile(join(BUILTIN_DIR, file), { checkToolSchemas: false });
    profiles.set(p.name, p);
  }
}

/**
 * Adds a profile (a parsed value or raw JSON data). Replacing an existing name needs `{ replace: true }`.
 *
 * @example
 * ```ts
 * registerProfile(JSON.parse(readFileSync('profiles/legal.json', 'utf8')));
 * ```
 */
export function registerProfile(value: unknown, options: { replace?: boolean; source?: string } = {}): DomainProfile {
  ensureBuiltins();
  const p = parseProfile(value, options.source ?? '<profile>');
  if (profiles.has(p.name) && !options.replace) {
    throw new RegistryError(`domain profile '${p.name}' already exists; pass { replace: true } to replace it`);
  }
  profiles.set(p.name, p);
  return p;
}

/** The profile of a domain. */
export function getProfile(name: string): DomainProfile {
  ensureBuiltins();
  const p = profiles.get(name);
  if (!p) throw new RegistryError(`unknown domain profile '${name}'; known: ${[...profiles.keys()].sort().join(', ')}`);
  return p;
}

/** Every known profile, sorted by name. */
export function listProfiles(): DomainProfile[] {
  ensureBuiltins();
  return [...profiles.values()].sort((a, b) => a.name.localeCompare(b.name));
}
