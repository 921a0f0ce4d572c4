import { describe, expect, it } from 'vitest';
import { parseYamlText } from './yaml.js';

describe('parseYamlText', () => {
  it('gives plain data, with anchors and aliases expanded', () => {
    const r = parseYamlText('a: &x {k: 1}\nb: *x\n');
    expect(r.ok && r.value).toEqual({ a: { k: 1 }, b: { k: 1 } });
  });

  it.each([
    ['a syntax error', 'a: [1,\nb: 2\n', /./, 2],
    ['an alias with no anchor', 'a: 1\nb: *nope\n', /alias \*nope has no anchor/, 2],
    ['an alias whose name is a control character (found by fuzzing)', '*\0', /has no anchor/, 1],
    ['an alias inside its own anchor', 'a: 1\nb: &b\n  - *b\n', /alias \*b is inside the node its anchor names/, 3],
    ['a key that is a mapping (found by the fuzz soak: a comment whose `#` became `?`)', 'name: x\n? The demo: a run\n', /a key is a mapping; keys must be plain values/, 2],
    ['a key that is a list', 'a: 1\n[x, y]: 2\n', /a key is a list/, 2],
  ])('reports %s as a problem with its line, without throwing', (_what, text, message, line) => {
    const r = parseYamlText(text);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.message).toMatch(message);
      expect(r.line).toBe(line);
    }
  });

  it('reports an alias expansion past the limit', () => {
    const lines = ['a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]'];
    for (let i = 0; i < 8; i += 1) lines.push(`${'bcdefghi'[i]}: &${'bcdefghi'[i]} [${Array(10).fill(`*${i === 0 ? 'a' : 'bcdefghi'[i - 1]}`).join(', ')}]`);
    const r = parseYamlText(lines.join('\n'));
    expect(!r.ok && r.message).toMatch(/alias count/i);
  });
});
