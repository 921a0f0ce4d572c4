import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anyJson, readLines, stripBom, streamJsonl } from './jsonl-file.js';

async function tempFile(content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gymflow-jsonl-'));
  const path = join(dir, 'f.jsonl');
  await writeFile(path, content);
  return path;
}

describe('streamJsonl', () => {
  it('keeps line numbers across blank lines, CRLF and a BOM, and goes on after bad lines', async () => {
    const path = await tempFile('\uFEFF{"a":1}\r\n\r\n\n{bad\n  \n[2]\n\n');
    const records = [];
    for await (const r of streamJsonl(path, 'f.jsonl', anyJson)) records.push(r);
    expect(records).toEqual([
      { line: 1, ok: true, value: { a: 1 } },
      { line: 4, ok: false, errors: [expect.stringMatching(/^f\.jsonl:4 \$: invalid JSON/)] },
      { line: 6, ok: true, value: [2] },
    ]);
  });

  it('passes schema errors through with their place', async () => {
    const path = await tempFile('{"n":1}\n{"n":"x"}\n');
    const parse = (v: unknown, place: string): number => {
      const n = (v as { n: unknown }).n;
      if (typeof n !== 'number') throw new Error(`${place} $.n: expected number`);
      return n;
    };
    const records = [];
    for await (const r of streamJsonl(path, 'f', parse)) records.push(r);
    expect(records[1]).toMatchObject({ line: 2, ok: false, errors: [expect.stringContaining('f:2 $.n: expected number')] });
  });

  it('reads lines lazily and stops when the consumer stops', async () => {
    const path = await tempFile(Array.from({ length: 1000 }, (_, i) => `{"i":${i}}`).join('\n'));
    let seen = 0;
    for await (const line of readLines(path)) {
      seen += 1;
      if (line === '{"i":2}') break;
    }
    expect(seen).toBe(3);
  });

  it('drops a byte-order mark only at the start', () => {
    expect([stripBom('\uFEFF{}'), stripBom('{}\uFEFF'), stripBom('')]).toEqual(['{}', '{}\uFEFF', '']);
  });
});
