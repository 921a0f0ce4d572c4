import { describe, expect, it } from 'vitest';
import { evalResultOf } from './__fixtures__/results.js';
import { parseEvalResult } from './result.js';

describe('parseEvalResult', () => {
  const old = JSON.parse(JSON.stringify(evalResultOf('x', [1, 0, 1, 1], ['a', 'b', 'a', 'b']))) as Record<string, unknown>;
  const passK = [
    { k: 1, value: 0.75, low: 0.5, high: 1 },
    { k: 2, value: 0.5, low: 0, high: 1 },
  ];

  it('reads a result written before trials existed (no trials, no passK)', () => {
    expect(old).not.toHaveProperty('trials');
    expect(old).not.toHaveProperty('passK');
    expect(parseEvalResult(old, 'old.json')).toEqual(old);
  });

  it('reads trials with pass^1..pass^trials, and names a passK that does not match them', () => {
    expect(parseEvalResult({ ...old, trials: 2, passK }, 'r.json').passK).toEqual(passK);
    expect(() => parseEvalResult({ ...old, passK }, 'r.json')).toThrow(/r\.json \$\.passK: expected pass\^1 … pass\^trials/);
    expect(() => parseEvalResult({ ...old, trials: 2, passK: [...passK].reverse() }, 'r.json')).toThrow(/\$\.passK: expected pass\^1/);
    expect(() => parseEvalResult({ ...old, trials: 0 }, 'r.json')).toThrow(/r\.json \$\.trials: /);
  });
});
