import { expect, it } from 'vitest';
import { getProfile } from '../../core/profiles/registry.js';
import { Rng } from '../../core/rng.js';
import type { Trajectory } from '../../core/trajectory.js';
import { collect, FIXTURES } from '../../recorder/__fixtures__/fixtures.js';
import { convertPath } from '../../recorder/convert.js';
import { trajectory, type StepSpec } from '../__fixtures__/trajectories.js';
import { prepareRuleContext } from './context.js';
import { InformationUseCode, scoreInformationUse } from './information-use.js';
import { checkedTokensModule, JsRevealIndex, RevealIndexMemoryError, sharedRevealIndex, TOKENS_ABI_VERSION, tokensModule, WasmRevealIndex, type RevealIndex, type StepReveals } from './token-index.js';
import { informativeTokens } from './tokens.js';
import { requires } from '../../../tests/support/requires.js';

const built = requires.wasm();
let instance: WasmRevealIndex | undefined;
/** One WebAssembly index for the file, created on first use (inside the suites, which skip without it). */
function wasm(): WasmRevealIndex {
  instance ??= new WasmRevealIndex(tokensModule());
  return instance;
}


/** Random text over an alphabet that exercises every class: joiners, digits, non-ASCII, astral, lone surrogates. */
const ALPHABET = ['a', 'Z', 'q', '0', '7', '_', '.', '/', '-', ' ', '\n', '(', '=', 'é', 'ß', '数', '😀', '\ud800', '\udc00', '\u0000'];
/** Mostly word characters: tokens of tens to hundreds of bytes, running across several 64-byte blocks. */
const WORDY = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'x', 'y', '0', '7', '_', '.', '/', '-', ' ', 'é', '数', '😀'];

function randomText(rng: Rng, maxLength: number, alphabet: readonly string[] = ALPHABET): string {
  const n = Math.floor(rng.next() * maxLength);
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(rng.next() * alphabet.length)] as string;
  return s;
}

function columns(t: Pick<Trajectory, 'steps' | 'task'>, index: RevealIndex): unknown {
  const col = scoreInformationUse(prepareRuleContext(t, getProfile('coding')), index);
  return { scores: [...col.scores], codes: [...col.codes], refs: [...col.refs], counts: [...col.counts] };
}

built.describe('WebAssembly token scanner', () => {
  it('finds exactly the reference tokens', () => {
    const cases = [
      'Error in ./src/app.py line 42: max_retries=3',
      'see /etc/hosts. Then v2-beta, 3/4 and 3.14!',
      'the id is 7 or ab',
      'a_b x1 12',
      'größe = 5; 数据集_v1 ok',
      // UTF-16 length decides: 'éé' is 2 units (4 bytes), '😀' is 2 units (4 bytes, one code point)
      'éé ééé éééé é1 😀 😀😀 a😀 a.-b a..b -x- ..',
      '',
      'x'.repeat(200) + '.' + 'y'.repeat(70),
    ];
    for (const text of cases) expect(wasm().tokens(text)).toEqual(informativeTokens(text));
  });

  it('agrees with the reference on random text, across 64-byte block boundaries', () => {
    const rng = new Rng(7);
    for (let k = 0; k < 3000; k++) {
      const text = randomText(rng, 300);
      expect(wasm().tokens(text), JSON.stringify(text)).toEqual(informativeTokens(text));
    }
    for (let k = 0; k < 1000; k++) {
      const text = randomText(rng, 700, WORDY);
      expect(wasm().tokens(text), JSON.stringify(text)).toEqual(informativeTokens(text));
    }
  });
});

built.describe('WebAssembly reveal index', () => {
  it('is the index the rule uses', () => {
    expect(sharedRevealIndex()).toBeInstanceOf(WasmRevealIndex);
  });

  it('scores like the JavaScript reference on hand-made trajectories', () => {
    const specs: StepSpec[] = [
      ['search', { pattern: 'timeout' }, 'src/net/client.py:12: retry_count = 3; größe_1 = 数据集_v1'],
      ['file_read', { path: 'src/net/client.py', start_line: 10, end_line: 30 }, 'def retry_count(n=42): return 3.14'],
      ['shell', { command: ['grep', '-n', 'retry_count', 'src'] }, '12: retry_count'],
      ['file_write', { path: 'a.py', content: 'größe_1 = 1', meta: { depth: [1, -5, 2.5, 1e21, 'nested_value'] } }, 'ok'],
      ['calculator', { expression: '17 * 23' }, '391'],
      ['submit', { answer: 391 }, 'done'],
      ['submit', {}, ''],
    ];
    const t = trajectory(specs, { instruction: 'Fix retry_count in the client.' });
    expect(columns(t, wasm())).toEqual(columns(t, new JsRevealIndex()));
  });

  it('scores like the JavaScript reference on random trajectories', () => {
    const rng = new Rng(11);
    for (let k = 0; k < 60; k++) {
      const specs: StepSpec[] = [];
      const steps = 1 + Math.floor(rng.next() * 30);
      for (let i = 0; i < steps; i++) {
        const params = rng.next() < 0.5 ? { path: randomText(rng, 20), n: Math.floor(rng.next() * 200) } : { content: randomText(rng, 400), tags: [randomText(rng, 10), rng.next()] };
        specs.push(['file_write', params, randomText(rng, 500)]);
      }
      const t = trajectory(specs, { instruction: randomText(rng, 100) });
      expect(columns(t, wasm())).toEqual(columns(t, new JsRevealIndex()));
    }
  });

  it('scores like the JavaScript reference when actions reuse the instruction’s words', () => {
    // Actions and observations drawn from a small vocabulary that the instruction shares, so that every
    // verdict occurs often, the instruction-only one included.
    const vocabulary = ['alpha_1', 'beta_22', 'gamma.py', 'delta', 'src/eps', 'zeta_9', 'theta', 'iota_0'];
    const words = (rng: Rng, k: number): string => Array.from({ length: k }, () => vocabulary[Math.floor(rng.next() * vocabulary.length)] as string).join(' ');
    const rng = new Rng(13);
    const seen = new Set<number>();
    for (let k = 0; k < 200; k++) {
      const specs: StepSpec[] = [];
      const steps = 1 + Math.floor(rng.next() * 12);
      for (let i = 0; i < steps; i++) specs.push(['search', { pattern: words(rng, Math.floor(rng.next() * 3)) }, words(rng, Math.floor(rng.next() * 3))]);
      const t = trajectory(specs, { instruction: words(rng, 1 + Math.floor(rng.next() * 4)) });
      const expected = columns(t, new JsRevealIndex()) as { codes: number[] };
      expect(columns(t, wasm())).toEqual(expected);
      for (const c of expected.codes) seen.add(c);
    }
    expect([...seen].sort()).toEqual(Object.values(InformationUseCode).sort());
  });

  it('scores like the JavaScript reference on ASCII trajectories with repeated observations', () => {
    // ASCII only (the `encodeInto` path of the writes; the random trajectories above are almost never
    // ASCII), with observations repeated right after themselves and later on, as re-reads are.
    const ascii = ALPHABET.filter((c) => c.charCodeAt(0) < 0x80 && c !== '\u0000');
    const rng = new Rng(12);
    for (let k = 0; k < 60; k++) {
      const specs: StepSpec[] = [];
      const seen: string[] = [];
      const steps = 1 + Math.floor(rng.next() * 30);
      for (let i = 0; i < steps; i++) {
        const r = rng.next();
        let observation: string;
        if (seen.length > 0 && r < 0.3) observation = seen[Math.floor(rng.next() * seen.length)] as string; // an earlier one
        else if (seen.length > 0 && r < 0.5) observation = seen[seen.length - 1] as string; // the previous one
        else observation = `${randomText(rng, 300, ascii)}x_1`;
        seen.push(observation);
        specs.push(['file_read', { path: randomText(rng, 20, ascii), n: Math.floor(rng.next() * 200) }, observation]);
      }
      const t = trajectory(specs, { instruction: randomText(rng, 100, ascii) });
      expect(columns(t, wasm())).toEqual(columns(t, new JsRevealIndex()));
    }
  });

  it('finds late reveals among observations full of tokens that cannot matter, trajectory after trajectory', () => {
    // Once the first reveal is known the module checks an observation's tokens against a filter of the
    // pending action tokens (first seen in a later action, not revealed yet). Here most observation tokens
    // are either in no action or in an action already passed, a few pending ones come late, and the
    // trajectories are scored in an interleaved order, so a filter left dirty by one would show in the next.
    const rng = new Rng(13);
    const vocabulary = Array.from({ length: 300 }, (_, i) => `name_${i}`);
    const word = (): string => vocabulary[Math.floor(rng.next() * vocabulary.length)] as string;
    const make = (steps: number): Trajectory => {
      const specs: StepSpec[] = [];
      for (let i = 0; i < steps; i++) {
        const observation = Array.from({ length: 40 }, () => (rng.next() < 0.5 ? word() : `noise${Math.floor(rng.next() * 1e6)}`)).join(' ');
        // Actions use the vocabulary, and now and then a token an observation reveals only later.
        const content = rng.next() < 0.2 ? `late_${i + 3} ${word()}` : `${word()} ${word()}`;
        specs.push(['file_write', { path: `f${i % 7}.py`, content }, rng.next() < 0.1 ? `${observation} late_${i + 5}` : observation]);
      }
      return trajectory(specs, { instruction: 'Use what you learn.' });
    };
    const pool = [make(200), make(60), make(5), make(400)];
    for (const k of [0, 1, 2, 3, 1, 0, 3, 2, 2, 0]) {
      const t = pool[k] as Trajectory;
      expect(columns(t, wasm()), `trajectory ${k}`).toEqual(columns(t, new JsRevealIndex()));
    }
  });

  it('scores like the JavaScript reference on the converted agent-log fixtures', async () => {
    const converted = await collect(convertPath(FIXTURES));
    expect(converted.trajectories.length).toBeGreaterThan(10);
    let steps = 0;
    for (const t of converted.trajectories) {
      expect(columns(t, wasm()), t.id).toEqual(columns(t, new JsRevealIndex()));
      steps += t.steps.length;
    }
    expect(steps).toBeGreaterThan(100);
  });

  it('grows its memory for megabytes of text and many distinct tokens, and keeps scoring right', () => {
    const words = Array.from({ length: 60_000 }, (_, i) => `tok_${i.toString(36)}`);
    const big = words.join(' ');
    const specs: StepSpec[] = [
      ['file_read', { path: 'big.txt' }, big],
      ['file_write', { path: 'out.txt', content: `${big} ${'ü'.repeat(300_000)}` }, 'ok'],
      ['search', { pattern: 'tok_zzz' }, 'tok_abc'],
      ['search', { pattern: 'tok_abc' }, 'none'],
    ];
    const t = trajectory(specs, { instruction: 'Find it.' });
    const fresh = new WasmRevealIndex(tokensModule());
    expect(columns(t, fresh)).toEqual(columns(t, new JsRevealIndex()));
    // and a small trajectory right after, on the grown index
    const small = trajectory([['search', { pattern: 'x' }, 'found needle_1'], ['file_read', { path: 'needle_1' }]], { instruction: 'Go.' });
    expect(columns(small, fresh)).toEqual(columns(small, new JsRevealIndex()));
  });
});

it('refuses a module built from another version of tokens.c, which would be read with the wrong layout', () => {
  // The smallest valid module: no exports, as a build from before `abi_version` existed has none of its own.
  const empty = Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  expect(() => checkedTokensModule(empty, 'old/tokens.wasm')).toThrow(/^old\/tokens\.wasm was built from another version of tokens\.c .*npm run setup/);
});

built.it('accepts the module built from this source', () => {
  expect(TOKENS_ABI_VERSION).toBe(3);
  expect(() => tokensModule()).not.toThrow();
});

it('scores a trajectory the WebAssembly index has no memory for with the JavaScript one', () => {
  // An index that runs out of memory, as the module does past 4 GiB.
  class Exhausted extends JsRevealIndex {
    override reveal(): StepReveals {
      throw new RevealIndexMemoryError();
    }
  }
  const t = trajectory([['search', { pattern: 'x' }, 'found needle_1'], ['file_read', { path: 'needle_1' }, 'text'], ['submit', { answer: 'needle_1' }]], { instruction: 'Go.' });
  expect(columns(t, new Exhausted())).toEqual(columns(t, new JsRevealIndex()));
  const failing: RevealIndex = {
    reveal: () => {
      throw new Error('other');
    },
  };
  expect(() => columns(t, failing)).toThrow('other');
});
