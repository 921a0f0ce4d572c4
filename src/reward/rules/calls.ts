import type { TrajectoryStep } from '../../core/trajectory.js';
import type { RuleContext } from './context.js';
import { Hasher, hashParams } from './hash.js';
import { RevealIndexMemoryError, sharedRevealIndex, WasmRevealIndex, type PreparedCalls, type RevealIndex } from './token-index.js';

/**
 * The hash of every step's tool call — the tool name and the params, with key order and `undefined` members
 * ignored (the equivalence of comparing their canonical JSON) — as the redundancy rule's table keys.
 *
 * With the WebAssembly token index (the default) the params are written into its memory once per trajectory
 * and hashed there; the information-use rule then scans the same bytes ({@link WasmRevealIndex.preparedAction}),
 * so each step's params are read once for both rules. Steps whose params nest arrays or objects, and every
 * step when the module is unavailable or out of memory, are hashed in JavaScript ({@link hashParams}).
 * Equal calls take the same path, so they always get equal hashes; the rule confirms every match exactly.
 */

/** Seed of the call hash family. */
const SEED_CALL = 0x5eed01;

const sharedHasher = new Hasher();

/**
 * Writes the context's action params into a WebAssembly index and hashes the calls there (once per context
 * and index; see the module documentation). Nested steps are left at 0, 0.
 *
 * @throws RevealIndexMemoryError when the module's memory cannot hold the params.
 */
export function prepareCalls(ctx: RuleContext, index: WasmRevealIndex): PreparedCalls {
  return index.prepareCalls(ctx, ctx.steps, SEED_CALL);
}

/**
 * Step i's hash lanes at [2i] and [2i + 1] (see the module documentation). `index` is the process's shared
 * one unless given (tests compare the paths); any index but a WebAssembly one means hashing in JavaScript.
 */
export function callHashes(ctx: RuleContext, index: RevealIndex = sharedRevealIndex()): Int32Array {
  const { steps } = ctx;
  if (index instanceof WasmRevealIndex) {
    try {
      const { hashes, nested } = prepareCalls(ctx, index);
      for (const i of nested) hashStep(ctx, i, hashes);
      return hashes;
    } catch (err) {
      if (!(err instanceof RevealIndexMemoryError)) throw err;
    }
  }
  const hashes = new Int32Array(2 * steps.length);
  for (let i = 0; i < steps.length; i++) hashStep(ctx, i, hashes);
  return hashes;
}

function hashStep(ctx: RuleContext, i: number, out: Int32Array): void {
  const { action } = ctx.steps[i] as TrajectoryStep;
  hashParams(sharedHasher, SEED_CALL, action.tool, action.params, ctx.interner);
  out[2 * i] = sharedHasher.h1;
  out[2 * i + 1] = sharedHasher.h2;
}
