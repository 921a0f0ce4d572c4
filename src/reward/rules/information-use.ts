import { prepareCalls } from './calls.js';
import type { RuleContext } from './context.js';
import { JsRevealIndex, RevealIndexMemoryError, sharedRevealIndex, WasmRevealIndex, type RevealIndex } from './token-index.js';
import { emptyColumn, type RuleColumn, type StepRule } from './types.js';

/**
 * Information use: does an action use what earlier observations revealed?
 *
 * The rule reads the trajectory in order — the task instruction, then for each step its action params and
 * then its observation — and records where each informative token (`scanTokens` in tokens.ts:
 * identifiers, paths, numbers) was seen *first*. A token is **revealed at step k** when its first appearance is in step k's
 * observation: it was not in the instruction, nor in any earlier action or observation.
 *
 * For step t, with `A_t` the informative tokens of its action params (values only, not keys):
 * - **1** when some token of `A_t` was revealed at a step k < t;
 * - **not applicable** (neutral, left out of the step score) when no observation before t revealed any
 *   token (nothing to use yet — always so for the first step), when `A_t` is empty (`submit {}`,
 *   `look {}`: the action has no content that could carry information), or when `A_t` acts on the task
 *   as stated: it uses a token of the instruction that no earlier action used, and brings in no token of
 *   its own (every one is the instruction's or an earlier action's). Looking up the second of two entities
 *   a question names, with the attribute the first lookup asked for, needs no observation, so it neither
 *   uses nor ignores one;
 * - **0** otherwise: earlier observations revealed something, and the action brings in a token seen
 *   nowhere before (not in the instruction, an earlier action or an earlier observation), or only repeats
 *   what the instruction and earlier actions said, but uses none of what the observations revealed.
 *
 * A token the agent introduced itself (first seen in its own action) is never "revealed", even when a later
 * observation echoes it. Observations of invalid actions count: an error message reveals what went wrong.
 *
 * Cost: one pass over each instruction, params and observation character, O(1) table work per token; the
 * WebAssembly index stops reading observations once no later one can change a verdict (token-index.ts).
 */

/** Reason codes of the information-use rule. */
export const InformationUseCode = {
  USES: 1,
  IGNORES: 2,
  NOTHING_REVEALED: 3,
  NO_CONTENT: 4,
  ACTS_ON_TASK: 5,
} as const;

/**
 * Scores every step for information use (see the module documentation for the exact rule). `index` is the
 * process's shared one unless given (tests compare the implementations). A trajectory too large for the
 * WebAssembly index's memory is scored again with the JavaScript one (same verdicts).
 */
export function scoreInformationUse(ctx: RuleContext, index: RevealIndex = sharedRevealIndex()): RuleColumn {
  try {
    return scoreWith(ctx, index);
  } catch (err) {
    if (!(err instanceof RevealIndexMemoryError)) throw err;
    return scoreWith(ctx, new JsRevealIndex());
  }
}

function scoreWith(ctx: RuleContext, index: RevealIndex): RuleColumn {
  const n = ctx.steps.length;
  const col = emptyColumn('informationUse', n);
  const { scores, codes, refs, counts } = col;
  // The WebAssembly index scans the params it wrote for the redundancy rule's call hashes (calls.ts),
  // writing them now if that rule has not run on this context.
  if (index instanceof WasmRevealIndex) prepareCalls(ctx, index);
  const { steps: reveals, firstReveal } = index.reveal(ctx);
  for (let i = 0; i < n; i++) {
    const used = reveals[5 * i + 1] as number;
    if (used > 0) {
      scores[i] = 1;
      codes[i] = InformationUseCode.USES;
      refs[i] = reveals[5 * i + 2] as number;
      counts[i] = used;
    } else if (firstReveal < 0 || firstReveal >= i) {
      codes[i] = InformationUseCode.NOTHING_REVEALED;
    } else if (reveals[5 * i] === 0) {
      codes[i] = InformationUseCode.NO_CONTENT;
    } else if (reveals[5 * i + 3] === 0 && (reveals[5 * i + 4] as number) > 0) {
      codes[i] = InformationUseCode.ACTS_ON_TASK;
    } else {
      scores[i] = 0;
      codes[i] = InformationUseCode.IGNORES;
      refs[i] = firstReveal;
    }
  }
  return col;
}

/** The information-use rule. */
export const informationUseRule: StepRule = {
  rubric: 'informationUse',
  run: scoreInformationUse,
  rationale(code, ref, count, label) {
    switch (code) {
      case InformationUseCode.USES:
        return `uses ${count} token${count === 1 ? '' : 's'} revealed by earlier observations (first from step ${label(ref)})`;
      case InformationUseCode.IGNORES:
        return `uses none of the tokens earlier observations revealed (the first at step ${label(ref)})`;
      case InformationUseCode.NOTHING_REVEALED:
        return 'no earlier observation revealed anything yet (not applicable)';
      case InformationUseCode.NO_CONTENT:
        return 'the action has no content that could use information (not applicable)';
      case InformationUseCode.ACTS_ON_TASK:
        return 'acts on words of the instruction that no earlier action used, and brings in nothing new (not applicable)';
      default:
        return '';
    }
  },
};
