import { canonicalJson } from '../core/canonical.js';
import type { Outcome, Trajectory, TrajectoryStep } from '../core/trajectory.js';

/** One field that differs between two trajectories or two steps. */
export interface FieldDifference {
  field: string;
  a: unknown;
  b: unknown;
}

/** How two trajectories differ. */
export interface TrajectoryDiff {
  /** Same content id: the same episode. */
  identical: boolean;
  steps: { a: number; b: number; delta: number };
  /** Tool-call counts per tool, and the multiset difference (`onlyA`: calls A made that B did not). */
  tools: { a: Record<string, number>; b: Record<string, number>; onlyA: Record<string, number>; onlyB: Record<string, number> };
  /** Differences in `task.id`, `envId`, `agent.name`, `agent.model`. */
  header: FieldDifference[];
  /** Differences in the outcome's fields. */
  outcome: FieldDifference[];
  /** The first step index where the two differ, and how; absent when all shared steps agree and the counts match. */
  firstDivergence?: { index: number; differences: FieldDifference[] };
}

/** Step fields {@link diffTrajectories} can be told to ignore. */
export type IgnorableStepField = 'thought' | 'observation' | 'error';

/**
 * Compares two trajectories: step counts, tools used (as a multiset), outcome, and the first step where
 * they diverge (tool, params, observation, thought or error; or one trajectory running out of steps).
 * Timing and metadata are not compared.
 *
 * @example
 * ```ts
 * const d = diffTrajectories(before, after, { ignore: ['thought'] });
 * if (d.firstDivergence) console.log(`diverge at step ${d.firstDivergence.index}`);
 * ```
 */
export function diffTrajectories(a: Trajectory, b: Trajectory, options: { ignore?: readonly IgnorableStepField[] } = {}): TrajectoryDiff {
  const ignore = new Set(options.ignore ?? []);
  const toolsA = countTools(a.steps);
  const toolsB = countTools(b.steps);
  const diff: TrajectoryDiff = {
    identical: a.id === b.id,
    steps: { a: a.steps.length, b: b.steps.length, delta: b.steps.length - a.steps.length },
    tools: { a: toolsA, b: toolsB, onlyA: multisetMinus(toolsA, toolsB), onlyB: multisetMinus(toolsB, toolsA) },
    header: compareFields([
      ['task.id', a.task.id, b.task.id],
      ['envId', a.envId, b.envId],
      ['agent.name', a.agent.name, b.agent.name],
      ['agent.model', a.agent.model, b.agent.model],
    ]),
    outcome: compareFields((['success', 'score', 'terminated', 'truncated', 'reason'] as const).map((k): [string, unknown, unknown] => [k, a.outcome[k as keyof Outcome], b.outcome[k as keyof Outcome]])),
  };
  const n = Math.max(a.steps.length, b.steps.length);
  for (let i = 0; i < n; i += 1) {
    const sa = a.steps[i];
    const sb = b.steps[i];
    if (!sa || !sb) {
      diff.firstDivergence = { index: i, differences: [{ field: 'step', a: sa ? summarize(sa) : null, b: sb ? summarize(sb) : null }] };
      break;
    }
    const differences = compareFields([
      ['action.tool', sa.action.tool, sb.action.tool],
      ['action.params', sa.action.params, sb.action.params],
      ...(ignore.has('observation') ? [] : [['observation', sa.observation, sb.observation] as [string, unknown, unknown]]),
      ...(ignore.has('thought') ? [] : [['thought', sa.thought, sb.thought] as [string, unknown, unknown]]),
      ...(ignore.has('error') ? [] : [['error', sa.error, sb.error] as [string, unknown, unknown]]),
    ]);
    if (differences.length > 0) {
      diff.firstDivergence = { index: i, differences };
      break;
    }
  }
  return diff;
}

/**
 * A human-readable rendering of a diff, one fact per line (long values cut to `width` characters).
 */
export function formatDiff(diff: TrajectoryDiff, width = 120): string[] {
  const show = (v: unknown): string => {
    const s = v === undefined ? '(none)' : typeof v === 'string' ? JSON.stringify(v) : canonicalJson(v);
    return s.length > width ? `${s.slice(0, width - 1)}…` : s;
  };
  const lines: string[] = [];
  lines.push(diff.identical ? 'identical (same content id)' : 'different');
  lines.push(`steps: ${diff.steps.a} vs ${diff.steps.b} (${diff.steps.delta >= 0 ? '+' : ''}${diff.steps.delta})`);
  for (const d of diff.header) lines.push(`${d.field}: ${show(d.a)} vs ${show(d.b)}`);
  const tools = (m: Record<string, number>): string => Object.entries(m).map(([k, v]) => `${k}×${v}`).join(', ') || '(none)';
  lines.push(`tools only in A: ${tools(diff.tools.onlyA)}`);
  lines.push(`tools only in B: ${tools(diff.tools.onlyB)}`);
  for (const d of diff.outcome) lines.push(`outcome.${d.field}: ${show(d.a)} vs ${show(d.b)}`);
  if (diff.firstDivergence) {
    lines.push(`first divergence at step ${diff.firstDivergence.index}:`);
    for (const d of diff.firstDivergence.differences) lines.push(`  ${d.field}: ${show(d.a)} vs ${show(d.b)}`);
  } else {
    lines.push('no divergent step');
  }
  return lines;
}

function countTools(steps: readonly TrajectoryStep[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of steps) out[s.action.tool] = (out[s.action.tool] ?? 0) + 1;
  return out;
}

function multisetMinus(x: Record<string, number>, y: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(x)) {
    const d = v - (y[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

function compareFields(pairs: readonly [string, unknown, unknown][]): FieldDifference[] {
  const out: FieldDifference[] = [];
  for (const [field, a, b] of pairs) {
    if (canonicalJson(a ?? null) !== canonicalJson(b ?? null)) out.push({ field, a, b });
  }
  return out;
}

function summarize(s: TrajectoryStep): { tool: string; params: Record<string, unknown> } {
  return { tool: s.action.tool, params: s.action.params };
}
