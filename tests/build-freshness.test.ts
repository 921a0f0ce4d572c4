import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain JavaScript beside the executable, without declarations
import { BUILD_STAMP, staleBuildInput } from '../bin/build-freshness.js';

const stale = staleBuildInput as (root: string) => string | undefined;

describe("bin/gymflow.js's build freshness check", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A clone-like tree whose every input is at `t0` (seconds), with or without a build stamp at `stampAt`. */
  function tree(stampAt?: number): string {
    const root = mkdtempSync(join(tmpdir(), 'gymflow-fresh-'));
    dirs.push(root);
    const t0 = 1_000_000;
    for (const dir of ['src/core/__fixtures__', 'workflows', 'scripts', 'dist']) mkdirSync(join(root, dir), { recursive: true });
    for (const file of ['src/core/a.ts', 'src/core/a.test.ts', 'src/core/__fixtures__/f.ts', 'workflows/w.ts', 'package.json', 'tsconfig.json', 'scripts/build.sh']) writeFileSync(join(root, file), '');
    for (const p of ['src/core/a.ts', 'src/core/a.test.ts', 'src/core/__fixtures__/f.ts', 'src/core/__fixtures__', 'src/core', 'src', 'workflows/w.ts', 'workflows', 'package.json', 'tsconfig.json', 'scripts/build.sh']) utimesSync(join(root, p), t0, t0);
    if (stampAt !== undefined) {
      writeFileSync(join(root, BUILD_STAMP as string), '');
      utimesSync(join(root, BUILD_STAMP as string), stampAt, stampAt);
    }
    return root;
  }

  it('is fresh when nothing the build reads is newer than its stamp', () => {
    expect(stale(tree(1_000_010))).toBeUndefined();
  });

  it('names the missing build', () => {
    expect(stale(tree())).toBe('dist/.build-stamp');
  });

  it('names the first newer source, folder or configuration file, but not a newer test or fixture', () => {
    const root = tree(1_000_010);
    utimesSync(join(root, 'src/core/a.test.ts'), 1_000_020, 1_000_020);
    utimesSync(join(root, 'src/core/__fixtures__/f.ts'), 1_000_020, 1_000_020);
    expect(stale(root)).toBeUndefined();
    utimesSync(join(root, 'workflows/w.ts'), 1_000_020, 1_000_020);
    expect(stale(root)).toBe('workflows/w.ts');
    utimesSync(join(root, 'src/core'), 1_000_020, 1_000_020);
    expect(stale(root)).toBe('src/core');
    const fresh = tree(1_000_010);
    utimesSync(join(fresh, 'package.json'), 1_000_020, 1_000_020);
    expect(stale(fresh)).toBe('package.json');
  });
});
