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
    writeFileSync(join(root, 'package.json'), '{}');
    const deep = join(root, 'dist', 'src', 'core');
    mkdirSync(deep, { recursive: true });
    expect(findPackageRoot(deep)).toBe(root);
    writeFileSync(join(root, 'dist', 'package.json'), '{}');
    expect(findPackageRoot(deep)).toBe(join(root, 'dist'));
  });

  it('throws when no directory above holds one', () => {
    expect(() => findPackageRoot('/')).toThrow(/no package.json/);
  });
});
