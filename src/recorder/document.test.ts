import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collect, fixture } from './__fixtures__/fixtures.js';
import { openHandsEventsAdapter } from './adapters/openhands-events.js';
import { sweAgentAdapter } from './adapters/swe-agent.js';
import { convertFile } from './convert.js';
import { isJsonlFile, jsonErrorLine, jsonSyntaxErrorOffset, readJsonDocument, readJsonDocuments, readYamlDocument } from './document.js';

async function tempFile(name: string, content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gymflow-doc-'));
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

async function documents(path: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const d of readJsonDocuments(path, 'f')) out.push(d.ok ? { line: d.line, value: d.value } : { problem: [d.problem.line, d.problem.message.slice(0, 12)] });
  return out;
}

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
    // An alias with no anchor made the YAML library throw out of the converter (found by tests/fuzz/recorder).
    const alias = join(dir, 'c.json');
    await writeFile(alias, '*\0');
    expect(await readYamlDocument(alias, 'c.json')).toMatchObject({ ok: false, problem: { file: 'c.json', line: 1, message: expect.stringMatching(/^invalid YAML \(alias .* has no anchor/) as unknown } });
  });

  it('tells JSONL from a document by the name or by a first line that is a whole value with more after it', async () => {
    expect(await isJsonlFile(await tempFile('a.jsonl', '{\n'))).toBe(true);
    expect(await isJsonlFile(await tempFile('a.NDJSON', ''))).toBe(true);
    expect(await isJsonlFile(await tempFile('a.json', '{"a":1}\n{"a":2}\n'))).toBe(true);
    expect(await isJsonlFile(await tempFile('a.json', '\uFEFF\n\n  [1]\r\n\n{"a":2}'))).toBe(true);
    expect(await isJsonlFile(await tempFile('a.json', '{\n  "a": 1\n}\n'))).toBe(false);
    expect(await isJsonlFile(await tempFile('a.json', '{"a": 1}\n\n  \n'))).toBe(false);
    expect(await isJsonlFile(await tempFile('a.json', ''))).toBe(false);
    // A first line longer than one read.
    expect(await isJsonlFile(await tempFile('a.json', `{"a":"${'x'.repeat(200_000)}"}\n{"a":2}\n`))).toBe(true);
  });

  it('reads a JSONL file one document per line, a bad line named by its own number', async () => {
    const path = await tempFile('x.json', '{"a":1}\n\n{"a":\n[2]\n');
    expect(await documents(path)).toEqual([{ line: 1, value: { a: 1 } }, { problem: [3, 'invalid JSON'] }, { line: 4, value: [2] }]);
    // A document stays one document, its error at its line.
    expect(await documents(await tempFile('y.json', '{\n  "a": [1,\n  ]\n}\n'))).toEqual([{ problem: [3, 'invalid JSON'] }]);
  });

  it('gives whole-document adapters one episode per line of a JSONL file', async () => {
    const line = JSON.stringify(JSON.parse(await readFile(fixture('swe-agent/v1-fc-testrepo-1c2844.traj'), 'utf8')));
    const path = await tempFile('trajs.jsonl', `${line}\n{"trajectory": [\n${line}\n`);
    const c = await collect(sweAgentAdapter.convert(path, { file: path, options: {} }));
    expect(c.trajectories).toHaveLength(2);
    expect(c.trajectories.map((t) => (t.metadata.source as { line: number }).line)).toEqual([1, 3]);
    expect(c.errors.map((e) => [e.line, e.path])).toEqual([[2, '$']]);
  });

  it('converts a V0 evaluation output.jsonl (events in history) with the V0 event adapter, run by run', async () => {
    const events = JSON.parse(await readFile(fixture('openhands/events-wrong-initial-state.json'), 'utf8')) as unknown[];
    const run = (id: string): string => JSON.stringify({ instance_id: id, test_result: { git_patch: '' }, instruction: 'Please rename game_2048.py to 2048.py', history: events });
    const path = await tempFile('output.jsonl', `${run('a-1')}\n${run('b-2')}\n`);
    const c = await collect(convertFile(path));
    expect(c.errors).toEqual([]);
    expect(c.trajectories.map((t) => [t.task.id, (t.metadata.source as { format: string }).format])).toEqual([
      ['a-1', openHandsEventsAdapter.name],
      ['b-2', openHandsEventsAdapter.name],
    ]);
  });
});
