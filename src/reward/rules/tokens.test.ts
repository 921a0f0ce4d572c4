import { describe, expect, it } from 'vitest';
import { informativeTokens, scanParamTokens, scanTokens } from './tokens.js';

describe('informative tokens', () => {
  it('finds identifiers, paths and numbers, trimming joiners at the ends', () => {
    expect(informativeTokens('Error in ./src/app.py line 42: max_retries=3')).toEqual(['Error', 'src/app.py', 'line', '42', 'max_retries']);
    expect(informativeTokens('see /etc/hosts. Then v2-beta, 3/4 and 3.14!')).toEqual(['etc/hosts', 'Then', 'v2-beta', '3/4', '3.14']);
  });

  it('drops short plain words and single digits', () => {
    expect(informativeTokens('the id is 7 or ab')).toEqual([]);
    expect(informativeTokens('a_b x1 12')).toEqual(['a_b', 'x1', '12']);
  });

  it('treats non-ASCII as word characters', () => {
    expect(informativeTokens('größe = 5; 数据集_v1 ok')).toEqual(['größe', '数据集_v1']);
  });

  it('hashes equal tokens equally wherever they occur, and different ones differently', () => {
    const hashes = (text: string): string[] => {
      const out: string[] = [];
      scanTokens(text, { token: (a, b) => out.push(`${a}:${b}`) });
      return out;
    };
    const [x, y] = hashes('parse_config src/a.py');
    const [z, w] = hashes('(src/a.py) -> parse_config');
    expect(x).toBe(w);
    expect(y).toBe(z);
    expect(x).not.toBe(y);
  });

  it('scans the values of params, not their keys', () => {
    const out: string[] = [];
    const params = { path_name: 'dir/file.txt', lines: [10, 20], nested: { key: 'inner_value' }, flag: true };
    scanParamTokens(params, { token: () => undefined });
    const collect = (v: unknown): void => {
      if (typeof v === 'string') out.push(...informativeTokens(v));
      else if (typeof v === 'number') out.push(...informativeTokens(String(v)));
    };
    collect('dir/file.txt');
    collect(10);
    collect(20);
    collect('inner_value');
    let count = 0;
    scanParamTokens(params, { token: () => void count++ });
    expect(count).toBe(out.length);
    expect(out).toEqual(['dir/file.txt', '10', '20', 'inner_value']);
  });
});
