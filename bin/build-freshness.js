// Whether the build under dist/ is older than what it is built from: the one rule, run in-process by
// `bin/gymflow.js` before every command (a few milliseconds) and by `scripts/build.sh --check | --if-stale`.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The folders and files the build reads. */
export const BUILD_INPUTS = ['src', 'workflows', 'activities', 'workers', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/build.sh', 'scripts/env-listing.mjs'];

/** The stamp scripts/build.sh writes last, marking a complete build. */
export const BUILD_STAMP = 'dist/.build-stamp';

/**
 * The first input under `root` modified after the build's stamp (folders count: a deleted or renamed source
 * changes its folder's time; tests and fixtures are not built, so they do not count), `BUILD_STAMP` when there
 * is no build, or `undefined` when the build is fresh.
 *
 * @param {string} root the package root
 * @returns {string | undefined} a path relative to `root`
 */
export function staleBuildInput(root) {
  let stamp;
  try {
    stamp = statSync(join(root, BUILD_STAMP)).mtimeMs;
  } catch {
    return BUILD_STAMP;
  }
  /** @param {string} rel @returns {string | undefined} */
  const visit = (rel) => {
    if (rel.endsWith('.test.ts') || rel.split('/').includes('__fixtures__')) return undefined;
    let st;
    try {
      st = statSync(join(root, rel));
    } catch {
      return undefined;
    }
    if (st.mtimeMs > stamp) return rel;
    if (!st.isDirectory()) return undefined;
    for (const name of readdirSync(join(root, rel))) {
      const found = visit(`${rel}/${name}`);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  for (const input of BUILD_INPUTS) {
    const found = visit(input);
    if (found !== undefined) return found;
  }
  return undefined;
}
