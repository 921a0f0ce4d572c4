import { z } from 'zod';
import type { Trajectory } from './trajectory.js';

/**
 * The fast path of trajectory validation. Reading scored data (`gymflow reward score`, `record validate`,
 * export) validates every line, and zod's generic object walk cost about as much as parsing the JSON. This
 * checks the same schema by hand and builds the same output zod builds: fresh objects with their keys in the
 * schema's order (records copied with their own order, nested values shared). It accepts a subset of what the
 * schema accepts — plain JSON-shaped values with no key set to `undefined` — and answers `undefined` for
 * anything else, valid or not; the caller then asks zod, which decides and words the errors. So the result
 * never depends on which path ran; `trajectory-fast.test.ts` checks this against zod, including on mutants.
 */

/** `startedAt`'s schema (ISO-8601 UTC with `Z`), shared with `StepSchema` so both test the same pattern. */
export const STARTED_AT = z.iso.datetime();

/** The regular expression zod tests `startedAt` with (`undefined` if a zod version hides it: then no fast path). */
const DATETIME: RegExp | undefined = (() => {
  const pattern = (STARTED_AT as unknown as { _zod?: { pattern?: unknown } })._zod?.pattern;
  return pattern instanceof RegExp && !pattern.global && !pattern.sticky ? pattern : undefined;
})();

const ID = /^sha256:[0-9a-f]{64}$/;

/** Thrown inside the fast path to give up; never escapes {@link fastParseTrajectory}. */
const GIVE_UP = Symbol('give up');

function giveUp(): never {
  // A symbol, not an Error: no stack is captured, and nothing else throws it.
  throw GIVE_UP;
}

/** A plain object from JSON (or written as a literal): not an array, not a class instance. */
function plain(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) giveUp();
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) giveUp();
  return v as Record<string, unknown>;
}

/** The object's keys are all in `known` and none holds `undefined` (zod keeps such a key; this path does not). */
function strict(o: Record<string, unknown>, known: ReadonlySet<string>): void {
  for (const k in o) {
    if (!known.has(k) || o[k] === undefined || !Object.prototype.hasOwnProperty.call(o, k)) giveUp();
  }
}

function string(v: unknown): string {
  if (typeof v !== 'string') giveUp();
  return v;
}

function nonEmpty(v: unknown): string {
  if (typeof v !== 'string' || v.length === 0) giveUp();
  return v;
}

function finite(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) giveUp();
  return v;
}

function boolean(v: unknown): boolean {
  if (typeof v !== 'boolean') giveUp();
  return v;
}

/**
 * A plain object as a record's input: zod leaves out a `__proto__` key and fails on a symbol key, which this path
 * leaves to zod.
 */
function plainRecord(v: unknown): Record<string, unknown> {
  const o = plain(v);
  if (Object.prototype.hasOwnProperty.call(o, '__proto__') || Object.getOwnPropertySymbols(o).length > 0) giveUp();
  return o;
}

/** A `z.record(z.string(), z.unknown())`: a shallow copy, as zod makes it. */
function record(v: unknown): Record<string, unknown> {
  const o = plainRecord(v);
  const out: Record<string, unknown> = {};
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) out[k] = o[k];
  return out;
}

function intArray(v: unknown): number[] {
  if (!Array.isArray(v)) giveUp();
  for (let i = 0; i < v.length; i++) if (!Number.isSafeInteger(v[i])) giveUp();
  return (v as number[]).slice();
}

function finiteArray(v: unknown): number[] {
  if (!Array.isArray(v)) giveUp();
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'number' || !Number.isFinite(v[i])) giveUp();
  return (v as number[]).slice();
}

const TRAJECTORY_KEYS = new Set(['schemaVersion', 'id', 'task', 'envId', 'agent', 'steps', 'outcome', 'reward', 'metadata']);
const TASK_KEYS = new Set(['id', 'domain', 'instruction', 'split', 'metadata']);
const AGENT_KEYS = new Set(['name', 'model', 'checkpoint']);
const STEP_KEYS = new Set(['index', 'thought', 'action', 'observation', 'envReward', 'tokens', 'logprobs', 'startedAt', 'durationMs', 'policyVersion', 'error', 'reward', 'metadata']);
const ACTION_KEYS = new Set(['tool', 'params']);
const TOKENS_KEYS = new Set(['prompt', 'completion']);
const ERROR_KEYS = new Set(['code', 'message']);
const STEP_REWARD_KEYS = new Set(['score', 'rubrics']);
const RUBRIC_KEYS = new Set(['score', 'layer', 'weight', 'rationale']);
const OUTCOME_KEYS = new Set(['success', 'score', 'terminated', 'truncated', 'reason']);
const REWARD_KEYS = new Set(['total', 'outcome', 'process', 'efficiency', 'layers']);
const LAYERS = new Set(['env', 'rules', 'judge', 'human', 'learned']);

function task(v: unknown): Trajectory['task'] {
  const o = plain(v);
  strict(o, TASK_KEYS);
  const out: Trajectory['task'] = { id: nonEmpty(o.id), domain: nonEmpty(o.domain), instruction: string(o.instruction) };
  if (o.split !== undefined) {
    if (o.split !== 'train' && o.split !== 'heldout') giveUp();
    out.split = o.split;
  }
  if (o.metadata !== undefined) out.metadata = record(o.metadata);
  return out;
}

function agent(v: unknown): Trajectory['agent'] {
  const o = plain(v);
  strict(o, AGENT_KEYS);
  const out: Trajectory['agent'] = { name: nonEmpty(o.name) };
  if (o.model !== undefined) out.model = string(o.model);
  if (o.checkpoint !== undefined) out.checkpoint = string(o.checkpoint);
  return out;
}

type Step = Trajectory['steps'][number];

function step(v: unknown, datetime: RegExp): Step {
  const o = plain(v);
  strict(o, STEP_KEYS);
  const index = o.index;
  if (!Number.isSafeInteger(index) || (index as number) < 0) giveUp();
  const out = { index } as Step;
  if (o.thought !== undefined) out.thought = string(o.thought);
  const a = plain(o.action);
  strict(a, ACTION_KEYS);
  out.action = { tool: nonEmpty(a.tool), params: record(a.params) };
  out.observation = string(o.observation);
  if (o.envReward !== undefined) out.envReward = finite(o.envReward);
  if (o.tokens !== undefined) {
    const t = plain(o.tokens);
    strict(t, TOKENS_KEYS);
    const tokens: NonNullable<Step['tokens']> = {};
    if (t.prompt !== undefined) tokens.prompt = intArray(t.prompt);
    if (t.completion !== undefined) tokens.completion = intArray(t.completion);
    out.tokens = tokens;
  }
  if (o.logprobs !== undefined) out.logprobs = finiteArray(o.logprobs);
  const startedAt = string(o.startedAt);
  if (!datetime.test(startedAt)) giveUp();
  out.startedAt = startedAt;
  const durationMs = finite(o.durationMs);
  if (!(durationMs >= 0)) giveUp();
  out.durationMs = durationMs;
  if (o.policyVersion !== undefined) {
    if (!Number.isSafeInteger(o.policyVersion) || (o.policyVersion as number) < 0) giveUp();
    out.policyVersion = o.policyVersion as number;
  }
  if (o.error !== undefined) {
    const e = plain(o.error);
    strict(e, ERROR_KEYS);
    out.error = { code: string(e.code), message: string(e.message) };
  }
  if (o.reward !== undefined) out.reward = stepReward(o.reward);
  if (o.metadata !== undefined) out.metadata = record(o.metadata);
  return out;
}

function stepReward(v: unknown): NonNullable<Step['reward']> {
  const o = plain(v);
  strict(o, STEP_REWARD_KEYS);
  const score = finite(o.score);
  const r = plainRecord(o.rubrics);
  const rubrics: NonNullable<Step['reward']>['rubrics'] = {};
  for (const name in r) {
    if (!Object.prototype.hasOwnProperty.call(r, name)) giveUp();
    const x = plain(r[name]);
    strict(x, RUBRIC_KEYS);
    const layer = x.layer;
    if (typeof layer !== 'string' || !LAYERS.has(layer)) giveUp();
    const rubric: NonNullable<Step['reward']>['rubrics'][string] = { score: finite(x.score), layer: layer as (typeof rubrics)[string]['layer'] };
    if (x.weight !== undefined) rubric.weight = finite(x.weight);
    if (x.rationale !== undefined) rubric.rationale = string(x.rationale);
    rubrics[name] = rubric;
  }
  return { score, rubrics };
}

function outcome(v: unknown): Trajectory['outcome'] {
  const o = plain(v);
  strict(o, OUTCOME_KEYS);
  const out = { success: boolean(o.success), score: finite(o.score), terminated: boolean(o.terminated), truncated: boolean(o.truncated), reason: string(o.reason) };
  if (out.terminated && out.truncated) giveUp();
  return out;
}

function reward(v: unknown): NonNullable<Trajectory['reward']> {
  const o = plain(v);
  strict(o, REWARD_KEYS);
  const out = { total: finite(o.total), outcome: finite(o.outcome), process: finite(o.process), efficiency: finite(o.efficiency), layers: record(o.layers) as Record<string, number> };
  for (const k in out.layers) finite(out.layers[k]);
  return out;
}

/**
 * The trajectory zod's `TrajectorySchema` would return for `value`, or `undefined` when this fast path is not
 * sure (an invalid value, or a valid one outside the subset it handles): ask zod then.
 */
export function fastParseTrajectory(value: unknown): Trajectory | undefined {
  const datetime = DATETIME;
  if (datetime === undefined) return undefined;
  try {
    const o = plain(value);
    strict(o, TRAJECTORY_KEYS);
    if (o.schemaVersion !== '1.0') giveUp();
    const id = string(o.id);
    if (!ID.test(id)) giveUp();
    const t = { schemaVersion: '1.0', id, task: task(o.task), envId: nonEmpty(o.envId), agent: agent(o.agent) } as Trajectory;
    const steps = o.steps;
    if (!Array.isArray(steps)) giveUp();
    const out = new Array<Step>(steps.length);
    for (let i = 0; i < steps.length; i++) out[i] = step(steps[i], datetime);
    t.steps = out;
    t.outcome = outcome(o.outcome);
    if (o.reward !== undefined) t.reward = reward(o.reward);
    t.metadata = record(o.metadata);
    return t;
  } catch (err) {
    if (err === GIVE_UP) return undefined;
    throw err;
  }
}

/*
 * Checking in place. A value fresh from `JSON.parse` that nothing else holds (a JSONL line's) need not be copied:
 * an object whose keys already come in the schema's order is what zod would return for it, member for member and in
 * order, so it is kept; only an object out of order is rebuilt, in order, around its (kept) members. A file gymflow
 * wrote rebuilds at most the top object of a scored trajectory (`reward score` appends `reward`). Reading a file of
 * trajectories to keep them all (export) then builds each trajectory once instead of twice.
 */

const TRAJECTORY_ORDER = [...TRAJECTORY_KEYS];
const TASK_ORDER = [...TASK_KEYS];
const AGENT_ORDER = [...AGENT_KEYS];
const STEP_ORDER = [...STEP_KEYS];
const ACTION_ORDER = [...ACTION_KEYS];
const TOKENS_ORDER = [...TOKENS_KEYS];
const ERROR_ORDER = [...ERROR_KEYS];
const STEP_REWARD_ORDER = [...STEP_REWARD_KEYS];
const RUBRIC_ORDER = [...RUBRIC_KEYS];
const OUTCOME_ORDER = [...OUTCOME_KEYS];
const REWARD_ORDER = [...REWARD_KEYS];

/** `strict` (every key known, own and defined); answers whether the keys come in `order`, the schema's. */
function inOrder(o: Record<string, unknown>, order: readonly string[]): boolean {
  let i = 0;
  let ordered = true;
  for (const k in o) {
    if (o[k] === undefined || !Object.prototype.hasOwnProperty.call(o, k)) giveUp();
    while (i < order.length && order[i] !== k) i++;
    if (i === order.length) {
      // Known but out of order, or unknown.
      if (!order.includes(k)) giveUp();
      ordered = false;
      i = 0;
      continue;
    }
    i++;
  }
  return ordered;
}

/**
 * `o` when nothing changed (`same`), else a copy in the schema's `order` with `set`'s members replacing its own (the
 * members checked and possibly rebuilt below it).
 */
function kept(o: Record<string, unknown>, order: readonly string[], same: boolean, set?: Record<string, unknown>): Record<string, unknown> {
  if (same) return o;
  const out: Record<string, unknown> = {};
  for (const k of order) {
    const v = set !== undefined && k in set ? set[k] : o[k];
    if (v !== undefined && Object.prototype.hasOwnProperty.call(o, k)) out[k] = v;
  }
  return out;
}

function checkIntArray(v: unknown): void {
  if (!Array.isArray(v)) giveUp();
  for (let i = 0; i < v.length; i++) if (!Number.isSafeInteger(v[i])) giveUp();
}

function checkFiniteArray(v: unknown): void {
  if (!Array.isArray(v)) giveUp();
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'number' || !Number.isFinite(v[i])) giveUp();
}

function checkStep(v: unknown, datetime: RegExp): unknown {
  const o = plain(v);
  const ordered = inOrder(o, STEP_ORDER);
  if (!Number.isSafeInteger(o.index) || (o.index as number) < 0) giveUp();
  if (o.thought !== undefined) string(o.thought);
  const a = plain(o.action);
  const actionOrdered = inOrder(a, ACTION_ORDER);
  nonEmpty(a.tool);
  plainRecord(a.params);
  const action = kept(a, ACTION_ORDER, actionOrdered);
  string(o.observation);
  if (o.envReward !== undefined) finite(o.envReward);
  let tokens = o.tokens;
  if (tokens !== undefined) {
    const t = plain(tokens);
    const tokensOrdered = inOrder(t, TOKENS_ORDER);
    if (t.prompt !== undefined) checkIntArray(t.prompt);
    if (t.completion !== undefined) checkIntArray(t.completion);
    tokens = kept(t, TOKENS_ORDER, tokensOrdered);
  }
  if (o.logprobs !== undefined) checkFiniteArray(o.logprobs);
  if (!datetime.test(string(o.startedAt))) giveUp();
  if (!(finite(o.durationMs) >= 0)) giveUp();
  if (o.policyVersion !== undefined && (!Number.isSafeInteger(o.policyVersion) || (o.policyVersion as number) < 0)) giveUp();
  let error = o.error;
  if (error !== undefined) {
    const e = plain(error);
    const errorOrdered = inOrder(e, ERROR_ORDER);
    string(e.code);
    string(e.message);
    error = kept(e, ERROR_ORDER, errorOrdered);
  }
  let reward = o.reward;
  if (reward !== undefined) {
    const r = plain(reward);
    const rewardOrdered = inOrder(r, STEP_REWARD_ORDER);
    finite(r.score);
    const rubrics = plainRecord(r.rubrics);
    let rubricsSame = true;
    const checked: Record<string, unknown> = {};
    for (const name in rubrics) {
      if (!Object.prototype.hasOwnProperty.call(rubrics, name)) giveUp();
      const x = plain(rubrics[name]);
      const rubricOrdered = inOrder(x, RUBRIC_ORDER);
      finite(x.score);
      if (typeof x.layer !== 'string' || !LAYERS.has(x.layer)) giveUp();
      if (x.weight !== undefined) finite(x.weight);
      if (x.rationale !== undefined) string(x.rationale);
      const rubric = kept(x, RUBRIC_ORDER, rubricOrdered);
      if (rubric !== x) rubricsSame = false;
      checked[name] = rubric;
    }
    const rubricsOut = rubricsSame ? rubrics : checked;
    reward = kept(r, STEP_REWARD_ORDER, rewardOrdered && rubricsSame, { rubrics: rubricsOut });
  }
  if (o.metadata !== undefined) plainRecord(o.metadata);
  const same = ordered && action === o.action && tokens === o.tokens && error === o.error && reward === o.reward;
  return kept(o, STEP_ORDER, same, { action, tokens, error, reward });
}

/**
 * What {@link fastParseTrajectory} would return for `value` (equal member for member, keys in the same order), built
 * from `value` itself: its objects whose keys are in the schema's order are kept, and only those out of order are
 * rebuilt; `undefined` where the fast path would decline. Only for a value nothing else holds or changes, such as one
 * fresh from `JSON.parse`: the result shares its objects.
 */
export function fastCheckTrajectory(value: unknown): Trajectory | undefined {
  const datetime = DATETIME;
  if (datetime === undefined) return undefined;
  try {
    const o = plain(value);
    const ordered = inOrder(o, TRAJECTORY_ORDER);
    if (o.schemaVersion !== '1.0' || !ID.test(string(o.id))) giveUp();
    const t = plain(o.task);
    const taskOrdered = inOrder(t, TASK_ORDER);
    nonEmpty(t.id);
    nonEmpty(t.domain);
    string(t.instruction);
    if (t.split !== undefined && t.split !== 'train' && t.split !== 'heldout') giveUp();
    if (t.metadata !== undefined) plainRecord(t.metadata);
    const task = kept(t, TASK_ORDER, taskOrdered);
    nonEmpty(o.envId);
    const a = plain(o.agent);
    const agentOrdered = inOrder(a, AGENT_ORDER);
    nonEmpty(a.name);
    if (a.model !== undefined) string(a.model);
    if (a.checkpoint !== undefined) string(a.checkpoint);
    const agent = kept(a, AGENT_ORDER, agentOrdered);
    const steps = o.steps;
    if (!Array.isArray(steps)) giveUp();
    let stepsOut: unknown[] = steps;
    for (let i = 0; i < steps.length; i++) {
      const step = checkStep(steps[i], datetime);
      if (step !== steps[i]) {
        if (stepsOut === steps) stepsOut = steps.slice();
        stepsOut[i] = step;
      }
    }
    const oc = plain(o.outcome);
    const outcomeOrdered = inOrder(oc, OUTCOME_ORDER);
    boolean(oc.success);
    finite(oc.score);
    if (boolean(oc.terminated) && boolean(oc.truncated)) giveUp();
    boolean(oc.truncated);
    string(oc.reason);
    const outcome = kept(oc, OUTCOME_ORDER, outcomeOrdered);
    let reward = o.reward;
    if (reward !== undefined) {
      const r = plain(reward);
      const rewardOrdered = inOrder(r, REWARD_ORDER);
      finite(r.total);
      finite(r.outcome);
      finite(r.process);
      finite(r.efficiency);
      const layers = plainRecord(r.layers);
      for (const k in layers) finite(layers[k]);
      reward = kept(r, REWARD_ORDER, rewardOrdered);
    }
    plainRecord(o.metadata);
    const same = ordered && task === o.task && agent === o.agent && stepsOut === steps && outcome === o.outcome && reward === o.reward;
    return kept(o, TRAJECTORY_ORDER, same, { task, agent, steps: stepsOut, outcome, reward }) as Trajectory;
  } catch (err) {
    if (err === GIVE_UP) return undefined;
    throw err;
  }
}
