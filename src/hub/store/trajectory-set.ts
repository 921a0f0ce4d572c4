import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { canonicalJson } from '../../core/canonical.js';
import type { Trajectory } from '../../core/trajectory.js';
import { parseTrajectory } from '../../core/trajectory.js';
import { StoreError } from '../errors.js';
import { mapPool } from '../pool.js';
import type { IndexEntry } from './index-entry.js';
import { parseTrajectorySetHeader, parseTrajectorySetItem, TRAJECTORY_SET_FORMAT, type TrajectorySetItem } from './manifests.js';
import type { ArtifactStore, PutOptions } from './store.js';

/**
 * Trajectory sets in the store (docs/store.md, "Trajectory sets").
 *
 * A trajectory is split in two:
 * - its **behaviour** — exactly the fields its content id hashes (`schemaVersion`, `task`, `envId`,
 *   `agent`, `outcome`, and per step `index`, `thought`, `action`, `observation`, `envReward`,
 *   `tokens`, `logprobs`, `error`) — stored as one object whose address is the sha256 of its canonical
 *   JSON, which *is* the trajectory id (see `trajectoryId` in core). Two episodes that did the same
 *   thing on the same task therefore share one object, however often they are collected or rescored;
 * - everything else — timing (`startedAt`, `durationMs`), rewards, metadata — kept inline on the
 *   episode's line of the set's manifest.
 *
 * The set itself is a JSONL manifest: a header line, then one line per trajectory in order,
 * `{"id", "object", "extra"}`. Repeats are kept (a GRPO group of identical episodes stays a group of G;
 * they share one behaviour object). Reading joins each line back into the full, validated trajectory.
 */

/** Top-level trajectory fields that belong to the behaviour (hashed by the id). */
const BEHAVIOUR_KEYS = ['schemaVersion', 'task', 'envId', 'agent', 'outcome'] as const;
/** Step fields that belong to the behaviour. */
const BEHAVIOUR_STEP_KEYS = new Set(['index', 'thought', 'action', 'observation', 'envReward', 'tokens', 'logprobs', 'error']);

/** Trajectory-set kinds the store knows; any kind is accepted. */
export type TrajectorySetKind = 'trajectories' | 'scored-trajectories' | (string & Record<never, never>);

/** Splits a trajectory into its behaviour (the id's preimage) and the rest. */
export function splitTrajectory(t: Trajectory): { behaviour: Record<string, unknown>; extra: Record<string, unknown> } {
  const behaviour: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t)) {
    if (k === 'id' || k === 'steps' || v === undefined) continue;
    if ((BEHAVIOUR_KEYS as readonly string[]).includes(k)) behaviour[k] = v;
    else extra[k] = v;
  }
  const bSteps: Record<string, unknown>[] = [];
  const xSteps: Record<string, unknown>[] = [];
  for (const s of t.steps) {
    const b: Record<string, unknown> = {};
    const x: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s)) {
      if (v === undefined) continue;
      if (BEHAVIOUR_STEP_KEYS.has(k)) b[k] = v;
      else x[k] = v;
    }
    bSteps.push(b);
    xSteps.push(x);
  }
  behaviour.steps = bSteps;
  extra.steps = xSteps;
  return { behaviour, extra };
}

/** Joins what {@link splitTrajectory} split (not validated). */
export function joinTrajectory(id: string, behaviour: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const bSteps = Array.isArray(behaviour.steps) ? (behaviour.steps as Record<string, unknown>[]) : [];
  const xSteps = Array.isArray(extra.steps) ? (extra.steps as Record<string, unknown>[]) : [];
  const steps = bSteps.map((s, i) => ({ ...s, ...(xSteps[i] ?? {}) }));
  return { ...behaviour, ...extra, id, steps };
}

/**
 * A trajectory as a set stores it: the canonical JSON of its behaviour (the object the set's line points at) and of
 * the rest (the line's `extra`).
 */
export interface StoredTrajectory {
  behaviour: string;
  extra: string;
}

/** The stored form of a trajectory ({@link StoredTrajectory}). */
export function storedTrajectory(t: Trajectory): StoredTrajectory {
  const { behaviour, extra } = splitTrajectory(t);
  return { behaviour: canonicalJson(behaviour), extra: canonicalJson(extra) };
}

/** Options of {@link putTrajectories}. */
export interface PutTrajectoriesOptions extends Omit<PutOptions, 'kind' | 'format'> {
  /** Default `trajectories`; `scored-trajectories` for scored ones. */
  kind?: TrajectorySetKind;
  /**
   * The stored form of a trajectory when the caller has it already ({@link storedTrajectory} of that very
   * trajectory, unchanged since: `collect` serialises each episode once, for its journal and for the set), or
   * `undefined` to have it made here.
   */
  stored?: (t: Trajectory) => StoredTrajectory | undefined;
}

const BATCH = 256;

/**
 * Stores trajectories as a set artifact (see the module comment) and returns its index entry, whose
 * `meta` records `count` and `unique` (distinct behaviours). Behaviour objects are durable before the
 * manifest is published, the manifest before its index entry, the entry before the name.
 *
 * @example
 * ```ts
 * const entry = await putTrajectories(store, trajectories, { kind: 'trajectories', parents: [taskSet.ref], name: 'rollouts/iter-3' });
 * for await (const t of readTrajectories(store, entry.ref)) console.log(t.id);
 * ```
 */
export async function putTrajectories(
  store: ArtifactStore,
  trajectories: Iterable<Trajectory> | AsyncIterable<Trajectory>,
  options: PutTrajectoriesOptions = {},
): Promise<IndexEntry> {
  const kind = options.kind ?? 'trajectories';
  const writer = await store.createWriter();
  const unique = new Set<string>();
  let count = 0;
  let pending: { id: string; stored: StoredTrajectory }[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    const refs = await store.putObjects(batch.map((p) => p.stored.behaviour));
    let text = '';
    batch.forEach((p, i) => {
      const object = refs[i] as string;
      unique.add(object);
      // `canonicalJson` of the line { id, extra, object }, its keys in sorted order, with `extra` already canonical.
      text += `{"extra":${p.stored.extra},"id":${JSON.stringify(p.id)},"object":${JSON.stringify(object)}}\n`;
    });
    await writer.write(text);
  };
  try {
    await writer.write(`${canonicalJson({ format: TRAJECTORY_SET_FORMAT, version: 1, kind })}\n`);
    for await (const t of trajectories) {
      if (typeof t.id !== 'string') throw new StoreError(`putTrajectories: trajectory ${count} has no id`);
      pending.push({ id: t.id, stored: options.stored?.(t) ?? storedTrajectory(t) });
      count++;
      if (pending.length >= BATCH) await flush();
    }
    await flush();
    const put: PutOptions = { kind, format: 'trajectory-set', meta: { ...options.meta, count, unique: unique.size } };
    if (options.parents !== undefined) put.parents = options.parents;
    if (options.name !== undefined) put.name = options.name;
    return await writer.commit(put);
  } finally {
    await writer.abort();
  }
}

/** Options of {@link readTrajectories}. */
export interface ReadTrajectoriesOptions {
  /** Validate every trajectory against the schema (default true). */
  validate?: boolean;
}

/**
 * Streams the trajectories of a set artifact in stored order. A bytes artifact holding JSONL
 * trajectories (e.g. one imported from a file) is read too. Errors name `ref:line $.path`.
 */
export async function* readTrajectories(store: ArtifactStore, ref: string, options: ReadTrajectoriesOptions = {}): AsyncGenerator<Trajectory> {
  const entry = await store.statForRead(ref);
  const validate = options.validate ?? true;
  const rl = createInterface({ input: createReadStream(await store.localObjectFile(ref)), crlfDelay: Infinity });
  let lineNo = 0;
  if (entry.format !== 'trajectory-set') {
    if (entry.format === 'tree') throw new StoreError(`${ref} is a file tree (${entry.kind}), not a trajectory set`);
    for await (const line of rl) {
      lineNo++;
      if (line.trim() === '') continue;
      yield parseStoredTrajectory(line, `${ref}:${lineNo}`, validate);
    }
    return;
  }
  let batch: { item: TrajectorySetItem; place: string }[] = [];
  const drain = async (): Promise<Trajectory[]> => {
    const items = batch;
    batch = [];
    return mapPool(items, 16, async ({ item, place }) => {
      const behaviour = (await store.getJson(item.object)) as Record<string, unknown>;
      const joined = joinTrajectory(item.id, behaviour, item.extra);
      return validate ? parseTrajectory(joined, place) : (joined as unknown as Trajectory);
    });
  };
  for await (const line of rl) {
    lineNo++;
    const place = `${ref}:${lineNo}`;
    if (lineNo === 1) {
      parseTrajectorySetHeader(line, place);
      continue;
    }
    if (line === '') continue;
    batch.push({ item: parseTrajectorySetItem(line, place), place });
    if (batch.length >= 64) yield* await drain();
  }
  yield* await drain();
}

/** Collects {@link readTrajectories} into an array. */
export async function loadTrajectories(store: ArtifactStore, ref: string, options: ReadTrajectoriesOptions = {}): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for await (const t of readTrajectories(store, ref, options)) out.push(t);
  return out;
}

function parseStoredTrajectory(line: string, place: string, validate: boolean): Trajectory {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new StoreError(`${place} $: invalid JSON (${(err as Error).message})`);
  }
  return validate ? parseTrajectory(value, place) : (value as Trajectory);
}
