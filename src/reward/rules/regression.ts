import type { TrajectoryStep } from '../../core/trajectory.js';
import { gitDiscard } from './commands.js';
import type { RuleContext } from './context.js';
import { HashTable64, safeCanonicalJson } from './hash.js';
import { emptyColumn, type RuleColumn, type StepRule } from './types.js';

/**
 * Regression: an action that undoes an earlier change.
 *
 * The rule models state as *slots* holding *values* and remembers, per slot, every value that some step
 * replaced. A write that puts back a value an earlier step replaced undoes that step.
 *
 * What a valid `write` step sets:
 * - **file content**: a target (`path`, `file_path`, …) and a full-content param (`content`, `file_text`,
 *   `new_content`, `text`, `data`, `body`): slot = the file, value = the content;
 * - **edit**: a target and an old/new pair (`old_string`/`new_string`, `old_str`/`new_str`, `old`/`new`,
 *   `old_text`/`new_text`, `search`/`replace`): the file's content becomes unknown (a fresh value no later
 *   write can equal), and the edit itself is remembered so its exact reverse can be recognised;
 * - **generic value**: a value param (`value`, `values`, `new_value`, `content`, `text`, `data`, `details`,
 *   `body`) without the above: slot = the tool with every other param (`edit_config(path, key)`,
 *   `update_order(order_id, operation)`), value = the value params;
 * - a targeted write with none of these (a delete, a move): the file's content becomes unknown; the rule
 *   does not apply to the step;
 * - an untargeted write with no value param (`take(object)`): no slot can be named; the rule does not
 *   apply.
 *
 * Verdicts:
 * - a write of value `v` to slot `S` scores **0** when `v ≠ current(S)` and some earlier step replaced
 *   `v` in `S` (restoring a file's content to what an earlier write replaced; setting a config value back);
 * - an edit scores **0** when it is the exact reverse (same target, old and new swapped) of an earlier
 *   edit;
 * - a git command that discards the agent's uncommitted writes (`checkout`/`restore` of a path written
 *   since the last `commit`, or `reset --hard`, `checkout .`, `restore .`, `stash`, `clean -f` while any path
 *   is so written) scores **0**; a discarding command that discards none of the agent's writes scores **1**;
 * - every other applicable write scores **1** (including rewriting the value a slot already has: that is
 *   redundancy's concern, not an undo).
 *
 * The rule does not apply (`NaN`, left out of the step score) to reads, searches, messages, thoughts,
 * invalid actions (they changed nothing), and executes other than discarding git commands. The content a
 * file had before the agent first wrote it is not known to the rule, so restoring it by writing it back
 * is only caught when done through git. `git commit` is taken to commit every written path.
 *
 * Values are compared exactly (interned strings), never by hash. Cost: O(1) map work per step plus one
 * native hash of each written value; a `reset --hard` visits the paths written since the last commit once
 * each.
 */

/** Full-content params of a file write. */
export const CONTENT_KEYS = ['content', 'file_text', 'new_content', 'text', 'data', 'body'] as const;
/** Old/new param pairs of an in-place edit. */
export const EDIT_PAIRS = [
  ['old_string', 'new_string'],
  ['old_str', 'new_str'],
  ['old', 'new'],
  ['old_text', 'new_text'],
  ['search', 'replace'],
] as const;
/** Params that carry the value a generic write sets. */
export const VALUE_KEYS = ['value', 'values', 'new_value', 'content', 'text', 'data', 'details', 'body'] as const;
const VALUE_KEY_SET = new Set<string>(VALUE_KEYS);

/** Reason codes of the regression rule. */
export const RegressionCode = {
  NEW_VALUE: 1,
  SAME_VALUE: 2,
  RESTORES: 3,
  NEW_EDIT: 4,
  REVERSES_EDIT: 5,
  DISCARDS: 6,
  DISCARDS_NOTHING: 7,
} as const;

type WriteKind =
  | { kind: 'content'; content: string }
  | { kind: 'edit'; old: string; new: string }
  | { kind: 'value' }
  | { kind: 'opaque' }
  | { kind: 'none' };

function classifyWrite(params: Record<string, unknown>, target: string | undefined): WriteKind {
  if (target !== undefined) {
    for (const k of CONTENT_KEYS) {
      const v = params[k];
      if (typeof v === 'string') return { kind: 'content', content: v };
    }
    for (const [o, nw] of EDIT_PAIRS) {
      const a = params[o];
      const b = params[nw];
      if (typeof a === 'string' && typeof b === 'string') return { kind: 'edit', old: a, new: b };
    }
  }
  for (const k of VALUE_KEYS) if (params[k] !== undefined) return { kind: 'value' };
  return target !== undefined ? { kind: 'opaque' } : { kind: 'none' };
}

/** Splits a generic write's params into "which slot" and "which value" canonical strings. */
function slotAndValue(tool: string, params: Record<string, unknown>): [string, string] {
  const slot: Record<string, unknown> = {};
  const value: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    if (VALUE_KEY_SET.has(k)) value[k] = v;
    else slot[k] = v;
  }
  return [`${tool}\u0000${safeCanonicalJson(slot)}`, safeCanonicalJson(value)];
}

/**
 * Values a slot can hold: an interned string id (> 0), {@link ORIGINAL} (the content before the agent
 * touched it), or a negative number unique to one step (content made unknown by an edit or a delete).
 */
const ORIGINAL = 0;

/**
 * The regression rule's tables for one trajectory. One instance is reused across calls (rules run
 * synchronously and never re-enter): a fresh set of maps and closures per trajectory cost more than
 * scoring a short trajectory's steps.
 */
class RegressionState {
  /** Slot key → current value. Slot keys: 2·id(path) for files, 2·id(slot string)+1 for generic slots. */
  readonly current = new Map<number, number>();
  /**
   * (slot key, value) → the step that replaced that value in that slot. Keys are exact integers. Sized up
   * front: at most one entry per step is added, except by a discard, so a trajectory rarely grows it.
   */
  readonly replaced = new HashTable64(1024);
  /** `pathId,oldId,newId` of every edit → its step. */
  readonly edits = new Map<string, number>();
  /** Paths written since the last commit. */
  readonly dirty = new Set<string>();
  /** Per path, the file value at the last commit (absent: the original). */
  readonly committed = new Map<string, number>();
  private interner: RuleContext['interner'] | undefined;

  /** Empties the tables for a trajectory. */
  begin(ctx: RuleContext): void {
    this.end();
    this.replaced.reset(ctx.steps.length + 16);
    this.interner = ctx.interner;
  }

  /**
   * Lets go of the trajectory's strings (paths, the interner), so an idle rule keeps none alive. Only
   * tables in use are cleared: `clear()` allocates a new backing store even for an empty map (~50 ns).
   */
  end(): void {
    if (this.current.size !== 0) this.current.clear();
    if (this.edits.size !== 0) this.edits.clear();
    if (this.dirty.size !== 0) this.dirty.clear();
    if (this.committed.size !== 0) this.committed.clear();
    this.interner = undefined;
  }

  /** The slot key of a file path. */
  fileSlot(path: string): number {
    return 2 * (this.interner as RuleContext['interner']).id(path);
  }

  /** Sets a slot to a value at step `at`; returns the step that had replaced that value, -1, or -2 (no change). */
  setSlot(slot: number, value: number, at: number): number {
    const cur = this.current.get(slot) ?? ORIGINAL;
    if (cur === value) return -2;
    const replaced = this.replaced;
    const r = replaced.find(slot, value);
    const undone = r >= 0 ? replaced.value(r) : -1;
    replaced.setValue(replaced.upsert(slot, cur), at);
    this.current.set(slot, value);
    return undone;
  }

  /** Restores a written path to its committed (or original) content; true when it was dirty. */
  discardPath(path: string, at: number): boolean {
    if (!this.dirty.has(path)) return false;
    this.dirty.delete(path);
    this.setSlot(this.fileSlot(path), this.committed.get(path) ?? ORIGINAL, at);
    return true;
  }

  /** Records a commit: every dirty path's current value becomes its committed one. */
  commit(): void {
    for (const p of this.dirty) this.committed.set(p, this.current.get(this.fileSlot(p)) ?? ORIGINAL);
    this.dirty.clear();
  }
}

const shared = new RegressionState();

/** Step i's verdict from {@link RegressionState.setSlot}'s answer. */
function verdict(col: RuleColumn, i: number, undone: number): void {
  if (undone >= 0) {
    col.scores[i] = 0;
    col.codes[i] = RegressionCode.RESTORES;
    col.refs[i] = undone;
  } else {
    col.scores[i] = 1;
    col.codes[i] = undone === -2 ? RegressionCode.SAME_VALUE : RegressionCode.NEW_VALUE;
  }
}

/** Scores every step for regression (see the module documentation for the exact rule). */
export function scoreRegression(ctx: RuleContext): RuleColumn {
  const { steps, categories, targets, errored, commands, interner } = ctx;
  const n = steps.length;
  const col = emptyColumn('regression', n);
  const { scores, codes, refs } = col;
  const state = shared;
  state.begin(ctx);
  const { edits, dirty } = state;

  for (let i = 0; i < n; i++) {
    if (errored[i] === 1) continue;
    const category = categories[i];
    const step = steps[i] as TrajectoryStep;
    if (category === 'write') {
      const target = targets[i];
      const params = step.action.params;
      const w = classifyWrite(params, target);
      if (w.kind === 'content' && target !== undefined) {
        dirty.add(target);
        verdict(col, i, state.setSlot(state.fileSlot(target), interner.id(w.content), i));
      } else if (w.kind === 'edit' && target !== undefined) {
        dirty.add(target);
        const p = interner.id(target);
        const o = interner.id(w.old);
        const nw = interner.id(w.new);
        const earlier = o === nw ? undefined : edits.get(`${p},${nw},${o}`);
        scores[i] = earlier === undefined ? 1 : 0;
        codes[i] = earlier === undefined ? RegressionCode.NEW_EDIT : RegressionCode.REVERSES_EDIT;
        if (earlier !== undefined) refs[i] = earlier;
        edits.set(`${p},${o},${nw}`, i);
        state.setSlot(state.fileSlot(target), -1 - i, i);
      } else if (w.kind === 'value') {
        const [slot, value] = slotAndValue(step.action.tool, params);
        if (target !== undefined) dirty.add(target);
        verdict(col, i, state.setSlot(2 * interner.id(slot) + 1, interner.id(value), i));
      } else if (w.kind === 'opaque' && target !== undefined) {
        dirty.add(target);
        state.setSlot(state.fileSlot(target), -1 - i, i);
      }
    } else if (category === 'execute') {
      const info = commands[i];
      if (info === undefined || info.git.length === 0) continue;
      let discarding = false;
      let discarded = 0;
      for (const g of info.git) {
        const d = gitDiscard(g);
        if (d.kind === 'commit') {
          state.commit();
        } else if (d.kind === 'paths') {
          discarding = true;
          for (const p of d.paths) if (state.discardPath(p, i)) discarded++;
        } else if (d.kind === 'all') {
          discarding = true;
          for (const p of [...dirty]) if (state.discardPath(p, i)) discarded++;
        }
      }
      if (discarding) {
        scores[i] = discarded > 0 ? 0 : 1;
        codes[i] = discarded > 0 ? RegressionCode.DISCARDS : RegressionCode.DISCARDS_NOTHING;
        col.counts[i] = discarded;
      }
    }
  }
  state.end();
  return col;
}

/** The regression rule. */
export const regressionRule: StepRule = {
  rubric: 'regression',
  run: scoreRegression,
  rationale(code, ref, count, label) {
    switch (code) {
      case RegressionCode.NEW_VALUE:
        return 'sets a value not replaced before';
      case RegressionCode.SAME_VALUE:
        return 'sets the value it already has (not an undo)';
      case RegressionCode.RESTORES:
        return `restores a value that step ${label(ref)} replaced: undoes that change`;
      case RegressionCode.NEW_EDIT:
        return 'edit does not reverse an earlier edit';
      case RegressionCode.REVERSES_EDIT:
        return `reverses the edit of step ${label(ref)}`;
      case RegressionCode.DISCARDS:
        return `discards uncommitted changes to ${count} path${count === 1 ? '' : 's'} the agent wrote`;
      case RegressionCode.DISCARDS_NOTHING:
        return 'discards none of the agent’s changes';
      default:
        return '';
    }
  },
};
