import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest directory at or above `from` that holds the `package.json` of the package `name`. Other
 * `package.json` files on the way (one without that name, one that does not parse) are passed by.
 *
 * @throws Error when no directory up to the filesystem root holds it.
 */
export function findPackageRoot(from: string, name = 'gymflow'): string {
  let dir = from;
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && packageName(file) === name) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json of '${name}' in ${from} or any directory above it`);
    dir = parent;
  }
}

function packageName(file: string): unknown {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}

/**
 * gymflow's root: the directory of its `package.json`, where `.venv/`, `trainer/`, `workers/`, `scripts/`,
 * `docs/` and `build/` live. Found by walking up from this file rather than by a fixed number of `..`, so
 * it is the same whether this module runs from `src/core/` or from a build under `dist/`.
 */
export const repoRoot: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));
