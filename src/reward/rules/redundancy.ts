import type { TrajectoryStep } from '../../core/trajectory.js';
import type { RuleContext } from './context.js';
import { callHashes } from './calls.js';
import { HashTable64, safeCanonicalJson, sameFlatParams } from './hash.js';
import { emptyColumn, type RuleColumn, type StepRule } from './types.js';

/**
 * Redundancy: a repeated call that can return nothing new.
 *
 * The rule keeps a logical clock of *state versions*. Every step that may change state (a valid `write`,
 * or a valid `execute` that is not provably read-only) advances the clock. A write that names a target
 * (`path`, `file_path`, …) changes only that target; any other state change (a shell command, a write
 * without a target) changes everything. The version a step depends on is:
 *
 * - a `read` or `write` with a target `p`: the last change to `p` or the last global change, whichever is
 *   later;
 * - every other step (`search`, `communicate`, `submit`, `execute`, targetless reads): the last change of
 *   any kind.
 *
 * A step is **redundant (score 0)** when the same tool with the same canonical params (key order and
 * `undefined` members ignored) was seen before at the version the step depends on now. For a state
 * changing step that means its own earlier run was the last change to what it touches, so the repeat is a
 * no-op (rewriting the content a file already has, re-running tests with nothing edited since). Otherwise
 * it scores **1**: a first call, different params (another line range), or a repeat after a change that
 * could alter its result (re-reading a file after editing it).
 *
 * Special cases:
 * - `think` steps make no environment call: the rule does not apply (neutral, left out of the step's
 *   score) unless the step repeats an earlier thought verbatim, which scores 0.
 * - Invalid actions (`step.error`) changed nothing, so they never advance the clock; they are judged like
 *   any other call, so repeating an identical invalid action with nothing changed in between scores 0 (it
 *   will fail the same way), while the first invalid attempt scores 1 (it is a mistake, not a repeat).
 * - A redundant state-changing step does not advance the clock (it changed nothing).
 *
 * Cost: one hash of each step's params (`callHashes`, calls.ts) and O(1) table work per step.
 */

/** Reason codes of the redundancy rule. */
export const RedundancyCode = {
  FIRST: 1,
  AFTER_CHANGE: 2,
  REPEAT: 3,
  REPEAT_NO_OP: 4,
  REPEAT_INVALID: 5,
  THINK: 6,
  REPEATED_THOUGHT: 7,
} as const;

function sameCall(a: TrajectoryStep, b: TrajectoryStep, cache: Map<TrajectoryStep, string>): boolean {
  if (a.action.tool !== b.action.tool) return false;
  if (a.action.params === b.action.params) return true;
  const flat = sameFlatParams(a.action.params, b.action.params);
  if (flat !== undefined) return flat;
  let ca = cache.get(a);
  if (ca === undefined) {
    ca = safeCanonicalJson(a.action.params);
    cache.set(a, ca);
  }
  let cb = cache.get(b);
  if (cb === undefined) {
    cb = safeCanonicalJson(b.action.params);
    cache.set(b, cb);
  }
  return ca === cb;
}

const sharedSeen = new HashTable64(1024);

/** Scores every step for redundancy (see the module documentation for the exact rule). */
export function scoreRedundancy(ctx: RuleContext): RuleColumn {
  const { steps, categories, targets, errored, changesState } = ctx;
  const n = steps.length;
  const col = emptyColumn('redundancy', n);
  const { scores, codes, refs } = col;
  // Rules run synchronously and never re-enter, so the table is reused across calls.
  const seen = sharedSeen;
  seen.reset(n);
  const hashes = callHashes(ctx);
  const canon = new Map<TrajectoryStep, string>();
  const lastTarget = new Map<string, number>();
  let clock = 0;
  let lastGlobal = 0;
  for (let i = 0; i < n; i++) {
    const step = steps[i] as TrajectoryStep;
    const category = categories[i];
    const slot = seen.upsert(hashes[2 * i] as number, hashes[2 * i + 1] as number);
    const isNew = seen.inserted;
    const prev = seen.aux(slot);
    const bad = errored[i] === 1;

    if (category === 'think' && !bad) {
      if (!isNew && sameCall(steps[prev] as TrajectoryStep, step, canon)) {
        scores[i] = 0;
        codes[i] = RedundancyCode.REPEATED_THOUGHT;
        refs[i] = prev;
      } else {
        codes[i] = RedundancyCode.THINK;
      }
      seen.setAux(slot, i);
      continue;
    }

    const target = targets[i];
    const targeted = target !== undefined && (category === 'read' || category === 'write');
    let version = clock;
    if (targeted) {
      const t = lastTarget.get(target) ?? 0;
      version = t > lastGlobal ? t : lastGlobal;
    }
    const change = changesState[i] === 1;
    if (!isNew && seen.value(slot) === version && sameCall(steps[prev] as TrajectoryStep, step, canon)) {
      scores[i] = 0;
      codes[i] = bad ? RedundancyCode.REPEAT_INVALID : change ? RedundancyCode.REPEAT_NO_OP : RedundancyCode.REPEAT;
      refs[i] = prev;
      seen.setAux(slot, i);
      continue;
    }
    scores[i] = 1;
    if (isNew) {
      codes[i] = RedundancyCode.FIRST;
    } else {
      codes[i] = RedundancyCode.AFTER_CHANGE;
      refs[i] = prev;
    }
    if (change) {
      clock++;
      if (category === 'write' && target !== undefined) lastTarget.set(target, clock);
      else lastGlobal = clock;
      version = clock;
    }
    seen.setValue(slot, version);
    seen.setAux(slot, i);
  }
  return col;
}

/** The redundancy rule. */
export const redundancyRule: StepRule = {
  rubric: 'redundancy',
  run: scoreRedundancy,
  rationale(code, ref, _count, label) {
    switch (code) {
      case RedundancyCode.FIRST:
        return 'first call with these params';
      case RedundancyCode.AFTER_CHANGE:
        return `repeats step ${label(ref)}, but what it depends on changed since`;
      case RedundancyCode.REPEAT:
        return `repeats step ${label(ref)}; nothing it depends on changed since, so it can return nothing new`;
      case RedundancyCode.REPEAT_NO_OP:
        return `repeats step ${label(ref)}, whose effect nothing has changed since: a no-op`;
      case RedundancyCode.REPEAT_INVALID:
        return `repeats the invalid action of step ${label(ref)} with nothing changed: it fails the same way`;
      case RedundancyCode.THINK:
        return 'think step: no environment call (not applicable)';
      case RedundancyCode.REPEATED_THOUGHT:
        return `repeats the thought of step ${label(ref)} verbatim`;
      default:
        return '';
    }
  },
};
