import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { findPackageRoot, MODULE_EXT, PACKAGE_ROOT } from './package-root.js';

describe('package root', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('is the clone from the sources, and .ts their extension', () => {
    expect(PACKAGE_ROOT).toBe(resolve(fileURLToPath(new URL('../..', import.meta.url))));
    expect(MODULE_EXT).toBe('.ts');
  });

  it('is the nearest directory holding a package.json, from as deep as the build puts modules', () => {
    const root = mkdtempSync(join(tmpdir(), 'gymflow-root-'));
    dirs.push(root);
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'gymflow' }));
    const deep = join(root, 'dist', 'src', 'core');
    mkdirSync(deep, { recursive: true });
    expect(findPackageRoot(deep)).toBe(root);
    expect(findPackageRoot(root)).toBe(root);
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
    expect(() => findPackageRoot(deep, 'no-such-package')).toThrow(/no package.json of 'no-such-package'/);
  });

  it('throws when no directory above holds one', () => {
    expect(() => findPackageRoot('/')).toThrow(/no package.json of 'gymflow'/);
  });
});
