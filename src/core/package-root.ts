/**
 * Where gymflow's own files are when it runs: from its TypeScript sources (a clone, through tsx or vitest),
 * from its build (dist/ of a clone) or as an installed package (node_modules/gymflow/dist/). Modules reach
 * each other through paths relative to themselves, which hold in the sources and in dist/ alike (the build
 * keeps the layout); files that are not built (package.json, trainer/, scripts/, build/wasm/, .venv/) are
 * found from the package root instead.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest directory at or above `from` that holds a package.json.
 *
 * @throws Error when there is none up to the file system's root.
 */
export function findPackageRoot(from: string): string {
  for (let dir = from; ; ) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json at or above ${from}`);
    dir = parent;
  }
}

/** gymflow's package root: the clone, or node_modules/gymflow of a project that installed it. */
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
