/**
 * The committed WebAssembly is what its C source builds to: `scripts/build-wasm.sh` into a scratch folder,
 * byte for byte against the committed `.wasm` (clang 14 and lld from Debian, as `scripts/setup.sh` installs
 * them; another clang version may emit different bytes, and then this test says to rebuild).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { requires } from './support/requires.js';
import { repoRoot } from './support/temporal.js';

const clang = requires.clang();

clang.it('the committed tokens.wasm is built from tokens.c', () => {
  const out = mkdtempSync(join(tmpdir(), 'gymflow-wasm-'));
  try {
    const run = spawnSync('bash', [join(repoRoot, 'scripts', 'build-wasm.sh'), out], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    const built = readFileSync(join(out, 'tokens.wasm'));
    const committed = readFileSync(join(repoRoot, 'src', 'reward', 'rules', 'wasm', 'tokens.wasm'));
    expect(built.equals(committed), 'src/reward/rules/wasm/tokens.wasm differs from a fresh build of tokens.c: run `bash scripts/build-wasm.sh` and commit the result').toBe(true);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 120_000);
