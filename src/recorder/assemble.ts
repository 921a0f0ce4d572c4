import { SchemaError } from '../core/errors.js';
import type { Outcome, Trajectory, TrajectoryStep } from '../core/trajectory.js';
import { makeTrajectory } from '../core/trajectory.js';
import type { ConversionItem } from './adapter.js';
import { toolCategory } from './categories.js';
import { problem } from './adapter.js';
import type { JsonObject } from './values.js';

/**
 * The last stretch every adapter shares: step drafts become indexed, timestamped steps, and the parts
 * become a validated trajectory (or problems naming what failed).
 */

/** The instant synthetic timestamps count from. */
export const SYNTHETIC_EPOCH_MS = 0;

/** The last instant a `Date` holds (ECMAScript's limit, +275760-09-13): a synthetic time goes no further. */
const LATEST_DATE_MS = 8.64e15;

/** A step as an adapter builds it, before indexing and timestamps. */
export interface StepDraft {
  tool: string;
  params: JsonObject;
  observation: string;
  thought?: string | undefined;
  /** Real start time (ISO) when the log has one. */
  startedAt?: string | undefined;
  durationMs?: number | undefined;
  error?: { code: string; message: string } | undefined;
  /** Token ids the model saw and sampled for this step, when the log records them. */
  tokens?: { prompt?: number[]; completion?: number[] } | undefined;
  /** Everything else the log says about this step. */
  metadata: JsonObject;
  /**
   * Calls produced by one model response share a group id; groups with several tool calls are marked
   * as parallel (`metadata.parallelGroup`).
   */
  group?: string | undefined;
}

/** The parts of a trajectory as an adapter produces them. */
export interface TrajectoryDraft {
  task: { id: string; domain: string; instruction: string; metadata?: JsonObject };
  envId: string;
  agent: { name: string; model?: string | undefined };
  steps: StepDraft[];
  outcome: Outcome;
  metadata: JsonObject;
}

/** Where a trajectory came from, for `metadata.source` and problem reports. */
export interface SourcePlace {
  format: string;
  file: string;
  line?: number | undefined;
}

/** The tool name of the synthetic action for an assistant turn that is text only (a reply to the user). */
export const RESPOND_TOOL = 'respond';

/**
 * Indexes the drafts, fills in time and the tool category of known tools (`metadata.category`, see
 * `categories.ts`). Real timestamps are kept; a step without one starts where the
 * previous one ended (at least 1 ms after it started), or at `1970-01-01T00:00:00.000Z` for the first
 * step; with no durations at all that is `epoch + index ms`.
 * Reports which steps got synthetic times.
 */
export function finalizeSteps(drafts: readonly StepDraft[]): { steps: TrajectoryStep[]; synthetic: 'none' | 'some' | 'all' } {
  const groupCalls = new Map<string, number>();
  for (const d of drafts) {
    if (d.group !== undefined && d.tool !== RESPOND_TOOL) groupCalls.set(d.group, (groupCalls.get(d.group) ?? 0) + 1);
  }
  const groupSeen = new Map<string, number>();
  let syntheticCount = 0;
  let previousEnd: number | undefined;
  const steps = drafts.map((d, index): TrajectoryStep => {
    const metadata: JsonObject = pruneUndefined({ ...d.metadata });
    if (metadata.category === undefined) {
      const category = toolCategory(d.tool, d.params);
      if (category !== undefined) metadata.category = category;
    }
    let startedAt = d.startedAt;
    if (startedAt === undefined) {
      syntheticCount += 1;
      // A duration in the log may run the previous end past what a Date holds (a log's `1e20` s): the last instant then.
      startedAt = new Date(Math.min(previousEnd ?? SYNTHETIC_EPOCH_MS + index, LATEST_DATE_MS)).toISOString();
      metadata.syntheticTimestamp = true;
    }
    const durationMs = d.durationMs !== undefined && Number.isFinite(d.durationMs) ? Math.max(0, d.durationMs) : 0;
    // At least 1 ms apart, so synthetic times stay strictly increasing (epoch + index ms when no step has a duration).
    previousEnd = Date.parse(startedAt) + Math.max(durationMs, 1);
    if (d.group !== undefined && d.tool !== RESPOND_TOOL) {
      const size = groupCalls.get(d.group) ?? 1;
      if (size > 1) {
        const position = groupSeen.get(d.group) ?? 0;
        groupSeen.set(d.group, position + 1);
        metadata.parallelGroup = { id: d.group, size, position };
      }
    }
    const step: TrajectoryStep = {
      index,
      action: { tool: d.tool, params: d.params },
      observation: d.observation,
      startedAt,
      durationMs,
    };
    if (d.thought !== undefined && d.thought.trim() !== '') step.thought = d.thought;
    if (d.error !== undefined) step.error = d.error;
    if (d.tokens !== undefined) step.tokens = d.tokens;
    if (Object.keys(metadata).length > 0) step.metadata = metadata;
    return step;
  });
  const synthetic = syntheticCount === 0 ? 'none' : syntheticCount === drafts.length ? 'all' : 'some';
  return { steps, synthetic };
}

/**
 * Builds and validates the trajectory. Yields it, or one error problem per schema issue (with the JSON
 * path inside the produced trajectory) when it fails validation, which would be an adapter bug.
 */
export function* assembleTrajectory(draft: TrajectoryDraft, place: SourcePlace): Generator<ConversionItem> {
  const { steps, synthetic } = finalizeSteps(draft.steps);
  const source: JsonObject = { format: place.format, file: place.file };
  if (place.line !== undefined) source.line = place.line;
  const metadata: JsonObject = { source, ...pruneUndefined(draft.metadata) };
  if (synthetic !== 'none') metadata.syntheticTimestamps = synthetic === 'all' ? true : 'partial';
  const task: Trajectory['task'] = { id: draft.task.id, domain: draft.task.domain, instruction: draft.task.instruction };
  const taskMeta = draft.task.metadata ? pruneUndefined(draft.task.metadata) : {};
  if (Object.keys(taskMeta).length > 0) task.metadata = taskMeta;
  const agent: Trajectory['agent'] = { name: draft.agent.name };
  if (draft.agent.model !== undefined && draft.agent.model !== '') agent.model = draft.agent.model;
  try {
    yield makeTrajectory({ task, envId: draft.envId, agent, steps, outcome: draft.outcome, metadata });
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    for (const issue of err.issues) {
      const m = /^\S+ (\$\S*): ([\s\S]*)$/.exec(issue);
      yield problem(place.file, m?.[1] ?? '$', `produced trajectory fails the schema: ${m?.[2] ?? issue}`, { line: place.line });
    }
  }
}

/** A shallow copy without `undefined` members (they would vanish in JSON anyway). */
export function pruneUndefined(obj: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}
