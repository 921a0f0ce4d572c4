import type { TrajectoryStep } from '../../core/trajectory.js';
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
 *   token (nothing to use yet — always so for the first step), or when `A_t` is empty (`submit {}`,
 *   `look {}`: the action has no content that could carry information);
 * - **0** otherwise: earlier observations revealed something, and the action carries content, but none
 *   of it came from them.
 *
 * A token the agent introduced itself (first seen in its own action) is never "revealed", even when a later
 * observation echoes it. Observations of invalid actions count: an error message reveals what went wrong.
 *
 * Cost: one pass over each instruction, params and observation character, O(1) table work per token.
 */

/** Reason codes of the information-use rule. */
export const InformationUseCode = {
  USES: 1,
  IGNORES: 2,
  NOTHING_REVEALED: 3,
  NO_CONTENT: 4,
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
  const { steps, instruction } = ctx;
  const n = steps.length;
  const col = emptyColumn('informationUse', n);
  const { scores, codes, refs, counts } = col;
  // Distinct tokens run at roughly one per 32–64 characters of text; the table grows if this is low.
  let chars = instruction.length;
  for (let i = 0; i < n; i++) chars += (steps[i] as TrajectoryStep).observation.length;
  // The WebAssembly index scans the params it wrote for the redundancy rule's call hashes (calls.ts),
  // writing them now if that rule has not run on this context.
  const prepared = index instanceof WasmRevealIndex ? index : undefined;
  if (prepared !== undefined) prepareCalls(ctx, prepared);
  index.reset((chars >> 5) + 16);
  index.instruction(instruction);
  let previousObservation: string | undefined;
  for (let i = 0; i < n; i++) {
    const step = steps[i] as TrajectoryStep;
    const revealedBefore = index.revealed;
    if (prepared !== undefined) prepared.preparedAction(i);
    else index.action(i, step.action.params);
    if (index.used > 0) {
      scores[i] = 1;
      codes[i] = InformationUseCode.USES;
      refs[i] = index.from;
      counts[i] = index.used;
    } else if (revealedBefore === 0) {
      codes[i] = InformationUseCode.NOTHING_REVEALED;
    } else if (index.count === 0) {
      codes[i] = InformationUseCode.NO_CONTENT;
    } else {
      scores[i] = 0;
      codes[i] = InformationUseCode.IGNORES;
      counts[i] = revealedBefore;
    }
    // An observation equal to the previous step's (a repeated read or command) can add nothing: every
    // token in it was recorded when the previous one was scanned. Skipping it is exact, and cheap to test
    // (`===` on the same string object is a pointer comparison; different lengths differ at once).
    const observation = step.observation;
    if (observation !== previousObservation) {
      index.observation(i, observation);
      previousObservation = observation;
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
        return `uses none of the ${count} token${count === 1 ? '' : 's'} earlier observations revealed`;
      case InformationUseCode.NOTHING_REVEALED:
        return 'no earlier observation revealed anything yet (not applicable)';
      case InformationUseCode.NO_CONTENT:
        return 'the action has no content that could use information (not applicable)';
      default:
        return '';
    }
  },
};
