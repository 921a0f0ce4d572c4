import { ConfigError } from '../../core/errors.js';
import type { DomainProfile } from '../../core/profiles/profile.js';
import type { Trajectory, TrajectoryStep } from '../../core/trajectory.js';
import { TOOL_CATEGORIES, type ToolCategory } from '../../core/types.js';
import { analyseCommand, normalisePath, type CommandInfo } from './commands.js';
import { Interner } from './hash.js';
import { slabArray } from './slab.js';

/**
 * What every rule needs to know about each step, computed once per trajectory: the tool's category,
 * the target it names, whether it changes state. Rules read these arrays instead of re-deriving them.
 */

/** The per-step facts the rules share. Arrays are indexed by step position (not `step.index`). */
export interface RuleContext {
  readonly steps: readonly TrajectoryStep[];
  /** The task instruction (tokens in it are never "revealed" by an observation). */
  readonly instruction: string;
  /** Category of each step's tool ({@link resolveCategory}). */
  readonly categories: readonly ToolCategory[];
  /** Normalised target path of each step ({@link targetOf}), or `undefined`. */
  readonly targets: readonly (string | undefined)[];
  /** Whether each step is an invalid action (`step.error` set): such a step changed nothing. */
  readonly errored: Uint8Array;
  /**
   * Whether each step may have changed environment state: a valid `write`, or a valid `execute` that is
   * not provably read-only ({@link analyseCommand}).
   */
  readonly changesState: Uint8Array;
  /** Command analysis of each valid `execute` step; `undefined` for other steps. */
  readonly commands: readonly (CommandInfo | undefined)[];
  /** Steps a competent agent needs: `referenceSteps` when given, else the profile's `stepBudget`. */
  readonly referenceSteps: number;
  /** Ids of long strings (contents, paths), shared by the rules so each is hashed natively once. */
  readonly interner: Interner;
}

/** Params that name the single target (file) an action reads or writes, in order of preference. */
export const TARGET_KEYS = ['path', 'file_path', 'filePath', 'file', 'filename', 'notebook_path'] as const;

const TARGET_RANK = new Map<string, number>(TARGET_KEYS.map((k, i) => [k, i]));

/** The target an action names: the first string among {@link TARGET_KEYS}, normalised (`./a` → `a`). */
export function targetOf(params: Record<string, unknown>): string | undefined {
  // `path`, the preferred key, is also by far the most common: when it holds a non-empty string it is the
  // answer whatever else the params contain, so the key walk below is skipped.
  const first = params['path'];
  if (typeof first === 'string' && first !== '') return normalisePath(first);
  // Walks the params' own (few) keys instead of probing every target key: misses are the common case.
  let best: string | undefined;
  let bestRank: number = TARGET_KEYS.length;
  for (const key in params) {
    const rank = TARGET_RANK.get(key);
    if (rank === undefined || rank >= bestRank) continue;
    const v = params[key];
    if (typeof v === 'string' && v !== '') {
      best = v;
      bestRank = rank;
    }
  }
  return best === undefined ? undefined : normalisePath(best);
}

/**
 * Name fragments that suggest a category, for tools the profile does not list (logs converted from
 * other agents: `Read`, `Bash`, `str_replace_editor`, …). Checked in this order; the first fragment found
 * among the name's words wins.
 */
const NAME_HINTS: readonly (readonly [ToolCategory, readonly string[]])[] = [
  ['think', ['think', 'thought', 'reason', 'plan']],
  ['submit', ['submit', 'finish', 'done', 'complete', 'resolve', 'conclude', 'answer']],
  ['write', ['write', 'edit', 'create', 'replace', 'patch', 'apply', 'insert', 'delete', 'remove', 'update', 'put', 'set', 'save', 'rename', 'move', 'editor', 'multiedit']],
  ['execute', ['bash', 'shell', 'run', 'exec', 'execute', 'python', 'terminal', 'command', 'cmd', 'click', 'type', 'press', 'call']],
  ['communicate', ['send', 'message', 'ask', 'respond', 'reply', 'post', 'say', 'tell', 'notify', 'email']],
  ['search', ['search', 'grep', 'find', 'glob', 'query', 'lookup']],
  ['read', ['read', 'view', 'cat', 'open', 'get', 'fetch', 'look', 'list', 'ls', 'show', 'load', 'inspect', 'browse']],
];

const heuristicCache = new Map<string, ToolCategory>();

/**
 * A category for a tool name the profile does not know, from the words of the name (`file_read` →
 * read, `MultiEdit` → write, `Bash` → execute). Unknown names are `execute`: assuming a tool may
 * change state keeps the redundancy rule from calling a possibly-effective repeat redundant.
 */
export function categoryFromName(tool: string): ToolCategory {
  const cached = heuristicCache.get(tool);
  if (cached !== undefined) return cached;
  const words = tool
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
  let found: ToolCategory = 'execute';
  outer: for (const [category, hints] of NAME_HINTS) {
    for (const w of words) {
      if (hints.includes(w)) {
        found = category;
        break outer;
      }
    }
  }
  if (heuristicCache.size < 10_000) heuristicCache.set(tool, found);
  return found;
}

const profileCategories = new WeakMap<DomainProfile, Map<string, ToolCategory>>();

function categoriesOf(profile: DomainProfile): Map<string, ToolCategory> {
  let map = profileCategories.get(profile);
  if (map === undefined) {
    map = new Map(profile.tools.map((t) => [t.name, t.category]));
    profileCategories.set(profile, map);
  }
  return map;
}

function isToolCategory(v: unknown): v is ToolCategory {
  return typeof v === 'string' && (TOOL_CATEGORIES as readonly string[]).includes(v);
}

/**
 * The category of a step's tool: the profile's declaration; else `step.metadata.category` when an
 * adapter recorded a valid one; else {@link categoryFromName}.
 */
export function resolveCategory(step: TrajectoryStep, profile: DomainProfile): ToolCategory {
  const declared = categoriesOf(profile).get(step.action.tool);
  if (declared !== undefined) return declared;
  const meta = step.metadata?.['category'];
  if (isToolCategory(meta)) return meta;
  return categoryFromName(step.action.tool);
}

/**
 * Computes the shared per-step facts of a trajectory (one pass).
 *
 * @param referenceSteps Steps of a reference solution (the efficiency rule's reference); defaults to the
 *   profile's `stepBudget`. Must be a finite number > 0.
 * @throws ConfigError when `referenceSteps` is not a finite number > 0.
 */
export function prepareRuleContext(t: Pick<Trajectory, 'steps' | 'task'>, profile: DomainProfile, referenceSteps?: number): RuleContext {
  const reference = referenceSteps ?? profile.stepBudget;
  if (!Number.isFinite(reference) || reference <= 0) {
    throw new ConfigError(`referenceSteps must be a finite number > 0, got ${String(reference)}`);
  }
  const steps = t.steps;
  const n = steps.length;
  const categories: ToolCategory[] = new Array<ToolCategory>(n);
  const targets: (string | undefined)[] = new Array<string | undefined>(n);
  const commands: (CommandInfo | undefined)[] = new Array<CommandInfo | undefined>(n);
  const errored = slabArray(Uint8Array, n);
  const changesState = slabArray(Uint8Array, n);
  const declared = categoriesOf(profile);
  for (let i = 0; i < n; i++) {
    const step = steps[i] as TrajectoryStep;
    const action = step.action;
    let category = declared.get(action.tool);
    if (category === undefined) {
      category = resolveCategory(step, profile);
      // Editor tools of other agents (`str_replace_editor`, OpenHands' editor) read with `command: view`.
      if (category === 'write' && action.params['command'] === 'view') category = 'read';
    }
    categories[i] = category;
    targets[i] = targetOf(action.params);
    const bad = step.error !== undefined;
    errored[i] = bad ? 1 : 0;
    if (bad) continue;
    if (category === 'write') {
      changesState[i] = 1;
    } else if (category === 'execute') {
      const info = analyseCommand(action.tool, action.params);
      commands[i] = info;
      changesState[i] = info.readOnly ? 0 : 1;
    }
  }
  return { steps, instruction: t.task.instruction, categories, targets, errored, changesState, commands, referenceSteps: reference, interner: new Interner() };
}
