import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEST_CMD, defaultSpec, loadSpecs, specFor } from './specs.js';

const dir = mkdtempSync(join(tmpdir(), 'swe-specs-'));
const inst = (repo: string, version: string): { instanceId: string; repo: string; version: string } => ({ instanceId: `${repo.replace('/', '__')}-1`, repo, version });

describe('spec tables', () => {
  it('reads YAML (or JSON) and looks up repo+version, repo+*, *+version, *+*; fills the defaults', () => {
    const f = join(dir, 'specs.yaml');
    writeFileSync(f, ['acme/calc:', '  "1.0": { python: "3.11", install: "pip install -e ." }', '  "*": { test_cmd: "pytest -rA -x" }', '"*":', '  "*": { log_parser: django }', ''].join('\n'));
    const specs = loadSpecs(f);
    expect(specFor(inst('acme/calc', '1.0'), specs)).toMatchObject({ python: '3.11', install: 'pip install -e .', test_cmd: DEFAULT_TEST_CMD, log_parser: 'pytest', pre_install: [], build_network: false });
    expect(specFor(inst('acme/calc', '2.0'), specs)).toMatchObject({ test_cmd: 'pytest -rA -x' });
    expect(specFor(inst('other/repo', '9'), specs)).toMatchObject({ log_parser: 'django' });
    // Without a table: the default spec, with SWE-bench's parser for a repository it knows.
    expect(specFor(inst('sympy/sympy', '1.1'), undefined)).toEqual(defaultSpec('sympy/sympy'));
    expect(defaultSpec('sympy/sympy').log_parser).toBe('sympy');
  });

  it('names the file and the field of a bad spec, and the instance a table has no spec for', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ 'acme/calc': { '1.0': { pre_install: 'apt-get install x' } } }));
    expect(() => loadSpecs(bad)).toThrow(/bad\.json \$\["acme\/calc"\]\["1\.0"\]\.pre_install: Invalid input: expected array/);
    writeFileSync(bad, JSON.stringify({ 'acme/calc': { '1.0': { tset_cmd: 'pytest' } } }));
    expect(() => loadSpecs(bad)).toThrow(/Unrecognized key: "tset_cmd" \(known: python, env_setup, pip_packages, pre_install, install, eval_commands, test_cmd, test_directives, log_parser, build_network\)/);
    writeFileSync(bad, JSON.stringify({ 'acme/calc': { '1.0': { log_parser: 'jest' } } }));
    expect(() => loadSpecs(bad)).toThrow(/\.log_parser: Invalid option/);
    expect(() => loadSpecs(join(dir, 'none.yaml'))).toThrow(/none\.yaml: cannot read the spec file: no such file or directory/);
    const specs = loadSpecs({ 'acme/calc': { '1.0': {} } });
    expect(() => specFor(inst('acme/calc', '2.0'), specs)).toThrow('instance acme__calc-1: no spec for acme/calc version 2.0 in specs (it has: acme/calc@1.0)');
  });
});
