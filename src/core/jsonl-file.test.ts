import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anyJson, findInvalidUtf8, lineBreaks, readLines, splitLines, stripBom, streamJsonl } from './jsonl-file.js';

async function tempFile(content: string | Buffer): Promise<string> {
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

describe('splitLines and lineBreaks', () => {
  /** Text with every line break readLines knows, blank lines, a BOM, a BOM not at the start, bad UTF-8, non-ASCII. */
  const bytes = Buffer.concat([
    Buffer.from('\uFEFF{"a":1}\r\n\r\n\n{bad\r  \n[2]\n\uFEFF{}\n{"é":"日本"}\n'),
    Buffer.from([0x7b, 0x22, 0xff, 0xc3, 0x22, 0x7d, 0x0a]),
    Buffer.from('{"last":true}'),
  ]);

  it('give the lines and the count readLines gives, in one piece or cut after any \\n', async () => {
    const path = await tempFile(bytes);
    const expected: string[] = [];
    for await (const line of readLines(path)) expected.push(line);
    expect(expected).toHaveLength(10);
    expect(splitLines(bytes, true)).toEqual(expected);
    // Cut after each \n: the pieces' lines, and their first line numbers from the counts, match.
    for (let cut = bytes.indexOf(10) + 1; cut > 0 && cut < bytes.length; cut = bytes.indexOf(10, cut) + 1) {
      const head = bytes.subarray(0, cut);
      const tail = bytes.subarray(cut);
      expect([...splitLines(head, true), ...splitLines(tail, false)]).toEqual(expected);
      expect(lineBreaks(head)).toBe(splitLines(head, true).length);
    }
    expect(lineBreaks(bytes)).toBe(expected.length - 1);
  });

  it('readLines gives the same lines however the file is cut into read chunks', async () => {
    const more = Buffer.concat([bytes, Buffer.from('\r\r\n\rtail\r'), Buffer.from('\n€x\r\n'.repeat(3))]);
    const path = await tempFile(more);
    const expected = splitLines(more, true);
    for (const chunkBytes of [1, 2, 3, 5, 7, 16, 64, 1 << 20]) {
      const lines: string[] = [];
      for await (const line of readLines(path, { chunkBytes })) lines.push(line);
      expect([chunkBytes, lines]).toEqual([chunkBytes, expected]);
    }
    const empty = await tempFile('');
    for await (const line of readLines(empty)) throw new Error(`unexpected line ${line}`);
  });
});

describe('findInvalidUtf8', () => {
  const at = async (...parts: (string | number[])[]): Promise<unknown> => findInvalidUtf8(await tempFile(Buffer.concat(parts.map((p) => Buffer.from(p as string)))));

  it('finds nothing in UTF-8, a character split between two read chunks included', async () => {
    expect(await at('')).toBeUndefined();
    expect(await at('plain\nü € 𝄞\n')).toBeUndefined();
    // The read stream's chunks are 64 KiB: the 4-byte character straddles the first boundary.
    expect(await at('x'.repeat(65_534), '𝄞 and more\n')).toBeUndefined();
  });

  it('gives the byte and line of the first bad sequence of every kind', async () => {
    expect(await at('ok\nab', [0xff], 'c\n', [0xfe])).toEqual({ offset: 5, line: 2 });
    expect(await at('a\nb\n', [0x80])).toEqual({ offset: 4, line: 3 }); // a stray continuation byte
    expect(await at('x', [0xc0, 0x80])).toEqual({ offset: 1, line: 1 }); // an overlong NUL
    expect(await at('x', [0xe0, 0x80, 0x80])).toEqual({ offset: 1, line: 1 }); // an overlong 3-byte form
    expect(await at('x', [0xed, 0xa0, 0x80])).toEqual({ offset: 1, line: 1 }); // a surrogate
    expect(await at('x', [0xf4, 0x90, 0x80, 0x80])).toEqual({ offset: 1, line: 1 }); // past U+10FFFF
    expect(await at('x', [0xe2, 0x28, 0xa1])).toEqual({ offset: 1, line: 1 }); // a bad continuation
    expect(await at('ends in half a character ', [0xe2, 0x82])).toEqual({ offset: 25, line: 1 });
    // Past the first chunk, and at its very edge.
    expect(await at('\n'.repeat(70_000), [0xc3])).toEqual({ offset: 70_000, line: 70_001 });
    expect(await at('y'.repeat(65_535), [0xe2, 0x82, 0x28])).toEqual({ offset: 65_535, line: 1 });
  });
});
