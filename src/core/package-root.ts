/**
 * Where gymflow's own files are when it runs: from its TypeScript sources (a clone, through tsx or vitest),
 * from its build (dist/ of a clone) or as an installed package (node_modules/gymflow/dist/). Modules reach
 * each other through paths relative to themselves, which hold in the sources and in dist/ alike (the build
 * keeps the layout); files that are not built (package.json, trainer/, scripts/, build/wasm/, .venv/) are
 * found from the package root instead.
 */
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
 * gymflow's package root: the clone (where `.venv/`, `trainer/`, `scripts/`, `docs/` and `build/` live), or
 * node_modules/gymflow of a project that installed it. Found by walking up from this file, so it is the same
 * from `src/core/` and from `dist/src/core/`.
 */
export const PACKAGE_ROOT: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/**
 * The extension of gymflow's modules as they run: `.ts` from the sources, `.js` from the build. A module
 * handed to something that loads it by path (a worker thread, a worker process, Temporal's workflow bundler)
 * is named with it, so the sources start sources and the build starts built code.
 *
 * @example
 * ```ts
 * const workflows = fileURLToPath(new URL(`../workflows/index${MODULE_EXT}`, import.meta.url));
 * ```
 */
export const MODULE_EXT: '.ts' | '.js' = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
