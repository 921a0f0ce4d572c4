import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findPackageRoot, repoRoot } from './repo-root.js';

describe('repoRoot', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("is the directory of gymflow's package.json", () => {
    expect((JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string }).name).toBe('gymflow');
    expect(existsSync(join(repoRoot, 'src', 'core', 'repo-root.ts'))).toBe(true);
  });

  it("walks up past other packages' package.json (a build under dist/ may carry one)", () => {
    const root = mkdtempSync(join(tmpdir(), 'gymflow-root-'));
    dirs.push(root);
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'gymflow' }));
    const deep = join(root, 'dist', 'src', 'core');
    mkdirSync(deep, { recursive: true });
    writeFileSync(join(root, 'dist', 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(root, 'dist', 'src', 'package.json'), '{ not json');
    expect(findPackageRoot(deep)).toBe(root);
    expect(findPackageRoot(root)).toBe(root);
    expect(() => findPackageRoot(deep, 'no-such-package')).toThrow(/no package.json of 'no-such-package'/);
  });
});
