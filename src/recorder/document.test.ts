import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonErrorLine, jsonSyntaxErrorOffset, readJsonDocument, readYamlDocument } from './document.js';

describe('whole-document reading', () => {
  it('reports the line of a JSON syntax error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-doc-'));
    const path = join(dir, 'x.json');
    await writeFile(path, '{\n  "a": 1,\n  "b": ]\n}\n');
    const r = await readJsonDocument(path, 'x.json');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toMatchObject({ file: 'x.json', line: 3, path: '$' });
    expect(jsonErrorLine('a\nb\nc', 'Unexpected token at position 4')).toBe(3);
    expect(jsonSyntaxErrorOffset('{"a": [1, 2, {"b": null}], "c": "x"}')).toBeUndefined();
    expect(jsonSyntaxErrorOffset('{"a": [1, 2,, 3]}')).toBe(12);
    expect(jsonSyntaxErrorOffset('{"a" 1}')).toBe(5);
    expect(jsonSyntaxErrorOffset('[1, 2')).toBe(5);
    expect(jsonSyntaxErrorOffset('{"a": "b\\"c"}')).toBeUndefined();
  });

  it('reads YAML and reports its errors with a line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gymflow-doc-'));
    const good = join(dir, 'g.yaml');
    await writeFile(good, 'a:\n  - 1\n  - when: 2025-01-01\n');
    expect(await readYamlDocument(good, 'g.yaml')).toEqual({ ok: true, value: { a: [1, { when: '2025-01-01' }] } });
    const bad = join(dir, 'b.yaml');
    await writeFile(bad, 'a: 1\nb: [1, 2\nc: 3\n');
    const r = await readYamlDocument(bad, 'b.yaml');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem.line).toBeGreaterThanOrEqual(2);
  });
});
