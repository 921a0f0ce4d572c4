import { expect, it } from 'vitest';
import { getProfile } from '../../core/profiles/registry.js';
import { Rng } from '../../core/rng.js';
import type { Trajectory } from '../../core/trajectory.js';
import { collect, FIXTURES } from '../../recorder/__fixtures__/fixtures.js';
import { convertPath } from '../../recorder/convert.js';
import { requires } from '../../../tests/support/requires.js';
import { trajectory, type StepSpec } from '../__fixtures__/trajectories.js';
import { callHashes } from './calls.js';
import { prepareRuleContext } from './context.js';
import { JsRevealIndex, RevealIndexMemoryError, tokensModule, WasmRevealIndex } from './token-index.js';

const built = requires.wasm();

function hashKeys(t: Pick<Trajectory, 'steps' | 'task'>, index: WasmRevealIndex | JsRevealIndex): string[] {
  const h = callHashes(prepareRuleContext(t, getProfile('coding')), index);
  return Array.from({ length: t.steps.length }, (_, i) => `${h[2 * i]}:${h[2 * i + 1]}`);
}

/** Which steps have equal keys: for each step, the first step with the same key. */
function partition(keys: readonly string[]): number[] {
  return keys.map((k) => keys.indexOf(k));
}

/** Calls that are equal under canonical JSON in pairs (0 = 1, 2 = 3, …), then calls that all differ. */
const EQUAL_PAIRS: StepSpec[] = [
  ['t', { a: 1, b: 'x' }],
  ['t', { b: 'x', a: 1 }],
  ['t', { a: 1, b: undefined }],
  ['t', { a: 1 }],
  ['t', { a: { y: 1, x: [1, 2] } }],
  ['t', { a: { x: [1, 2], y: 1 } }],
  ['t', { p: 'größe 😀', n: -3.5 }],
  ['t', { n: -3.5, p: 'größe 😀' }],
];
const ALL_DIFFERENT: StepSpec[] = [
  ['t', { a: 2 }],
  ['u', { a: 1 }],
  ['t', { a: '1' }],
  ['t', { a: 1.5 }],
  ['t', { a: true }],
  ['t', { a: false }],
  ['t', { a: null }],
  ['t', { a: [1] }],
  ['t', { ab: 'c' }],
  ['t', { a: 'bc' }],
  ['t', { a: '' }],
  ['t', {}],
  ['t', { a: 'x', b: 'y' }],
  ['t', { a: 'y', b: 'x' }],
  ['t', { a: 'x'.repeat(100) }],
  ['t', { a: `${'x'.repeat(99)}y` }],
  ['t', { a: 'lone \ud800' }],
  ['t', { a: 'lone \udc00' }],
];

built.describe('call hashes in WebAssembly [requires:wasm]', () => {
  it('are equal for equal calls under canonical JSON and differ otherwise', () => {
    const keys = hashKeys(trajectory([...EQUAL_PAIRS, ...ALL_DIFFERENT]), new WasmRevealIndex(tokensModule()));
    for (let i = 0; i < EQUAL_PAIRS.length; i += 2) expect(keys[i + 1], `step ${i + 1}`).toBe(keys[i]);
    const distinct = new Set(keys.filter((_, i) => i % 2 === 0 || i >= EQUAL_PAIRS.length));
    expect(distinct.size).toBe(EQUAL_PAIRS.length / 2 + ALL_DIFFERENT.length);
  });

  it('group the steps exactly as the JavaScript hashes do, on the converted agent-log fixtures and random calls', async () => {
    const converted = await collect(convertPath(FIXTURES));
    const rng = new Rng(3);
    const values = ['a', 'b', 'src/a.py', 1, 2, -1, 0.5, true, null, '', 'é', ['a'], { k: 1 }];
    const random = trajectory(
      Array.from({ length: 400 }, (): StepSpec => {
        const params: Record<string, unknown> = {};
        for (const key of ['path', 'x', 'y']) if (rng.next() < 0.6) params[key] = values[Math.floor(rng.next() * values.length)];
        return [rng.next() < 0.5 ? 'read' : 'write', params];
      }),
    );
    const wasm = new WasmRevealIndex(tokensModule());
    for (const t of [...converted.trajectories, random]) {
      expect(partition(hashKeys(t, wasm)), t.id).toEqual(partition(hashKeys(t, new JsRevealIndex())));
    }
  });

  it('are computed once per context, and again for the next one', () => {
    const wasm = new WasmRevealIndex(tokensModule());
    const a = prepareRuleContext(trajectory([['t', { a: 1 }], ['t', { a: 1 }]]), getProfile('coding'));
    const b = prepareRuleContext(trajectory([['t', { a: 2 }], ['t', { a: 3 }]]), getProfile('coding'));
    const first = callHashes(a, wasm);
    expect(callHashes(a, wasm)).toBe(first);
    const other = callHashes(b, wasm);
    expect(other).not.toBe(first);
    expect(other[0] === other[2] && other[1] === other[3]).toBe(false);
    expect(first[0] === first[2] && first[1] === first[3]).toBe(true);
  });

  it('fall back to the JavaScript hashes when the module has no memory for the params', () => {
    class Exhausted extends WasmRevealIndex {
      override prepareCalls(): never {
        throw new RevealIndexMemoryError();
      }
    }
    const t = trajectory([...EQUAL_PAIRS, ...ALL_DIFFERENT]);
    expect(hashKeys(t, new Exhausted(tokensModule()))).toEqual(hashKeys(t, new JsRevealIndex()));
  });
});
