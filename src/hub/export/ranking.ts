import { canonicalJson } from '../../core/canonical.js';
import type { Trajectory } from '../../core/trajectory.js';
import { trajectoryReward } from './select.js';

/**
 * Trajectory quality for `--top K` (docs/datasets.md, "Ranking").
 *
 * `quality = 0.40·reward + 0.30·outcome + 0.10·length + 0.15·novelty + 0.05·freshness`, each term in [0, 1]:
 * - **reward**: `reward.total` when scored, else `outcome.score`, clamped to [0, 1];
 * - **outcome**: 1 for a success, else 0;
 * - **length**: `shortest / steps`, where `shortest` is the fewest steps of a successful trajectory of
 *   the same task in the pool (of any trajectory of the task when none succeeded) — 1 for the
 *   shortest solution, ½ for one twice as long;
 * - **novelty**: 1 − the largest Jaccard similarity between the trajectory's action bigrams and those
 *   of any trajectory of the same task *already selected* (actions are `tool` + canonical params;
 *   one-step trajectories use unigrams) — a copy of a selected trajectory scores 0;
 * - **freshness**: `0.5^(age / 7 days)`, age measured from the newest trajectory in the pool by the
 *   first step's `startedAt` (0 when a trajectory has no steps).
 *
 * Selection is greedy: repeatedly take the highest-quality trajectory given what is already selected
 * (novelty changes as the selection grows). Novelty can only fall, so stale scores are upper bounds
 * and a lazy priority queue (CELF) gives the same result as recomputing everything each round. Ties
 * break by trajectory id, then input position, so the result is deterministic.
 */

/** Weights of the quality terms. */
export const QUALITY_WEIGHTS = { reward: 0.4, outcome: 0.3, length: 0.1, novelty: 0.15, freshness: 0.05 } as const;

/** Half-life of the freshness term. */
export const FRESHNESS_HALF_LIFE_MS = 7 * 24 * 3_600_000;

/** The terms and total of one trajectory's quality. */
export interface QualityScore {
  reward: number;
  outcome: number;
  length: number;
  novelty: number;
  freshness: number;
  quality: number;
}

const clamp01 = (x: number): number => (x <= 0 ? 0 : x >= 1 ? 1 : x);

/** The action n-grams novelty compares. */
export function actionNgrams(t: Trajectory): Set<string> {
  const acts = t.steps.map((s) => `${s.action.tool}${canonicalJson(s.action.params)}`);
  if (acts.length < 2) return new Set(acts);
  const out = new Set<string>();
  for (let i = 0; i + 1 < acts.length; i++) out.add(`${acts[i]}\u0000${acts[i + 1]}`);
  return out;
}

/** |A ∩ B| / |A ∪ B|; 1 for two empty sets. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const x of small) if (large.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

function startTime(t: Trajectory): number | undefined {
  const s = t.steps[0]?.startedAt;
  return s === undefined ? undefined : Date.parse(s);
}

interface Candidate {
  pos: number;
  t: Trajectory;
  task: string;
  grams: Set<string>;
  base: Omit<QualityScore, 'novelty' | 'quality'>;
  /** How many trajectories of its task were selected when `score` was computed. */
  seenSelected: number;
  novelty: number;
  quality: number;
}

function taskKey(t: Trajectory): string {
  return `${t.envId}\u0000${t.task.id}`;
}

/**
 * Selects up to `k` trajectories by greedy quality (see the module comment). Returns them best first
 * with their scores.
 */
export function selectTop(trajectories: readonly Trajectory[], k: number): { trajectory: Trajectory; index: number; score: QualityScore }[] {
  if (k <= 0 || trajectories.length === 0) return [];
  const shortest = new Map<string, { success: number; any: number }>();
  let newest = -Infinity;
  for (const t of trajectories) {
    const key = taskKey(t);
    const cur = shortest.get(key) ?? { success: Infinity, any: Infinity };
    cur.any = Math.min(cur.any, t.steps.length);
    if (t.outcome.success) cur.success = Math.min(cur.success, t.steps.length);
    shortest.set(key, cur);
    const time = startTime(t);
    if (time !== undefined && time > newest) newest = time;
  }
  const candidates: Candidate[] = trajectories.map((t, pos) => {
    const key = taskKey(t);
    const s = shortest.get(key) as { success: number; any: number };
    const best = Number.isFinite(s.success) ? s.success : s.any;
    const time = startTime(t);
    const base = {
      reward: clamp01(trajectoryReward(t)),
      outcome: t.outcome.success ? 1 : 0,
      length: t.steps.length === 0 ? 0 : clamp01(best / t.steps.length),
      freshness: time === undefined ? 0 : 0.5 ** (Math.max(0, newest - time) / FRESHNESS_HALF_LIFE_MS),
    };
    const c: Candidate = { pos, t, task: key, grams: actionNgrams(t), base, seenSelected: 0, novelty: 1, quality: 0 };
    c.quality = total(base, 1);
    return c;
  });

  const heap = new Heap<Candidate>((a, b) => b.quality - a.quality || (a.t.id < b.t.id ? -1 : a.t.id > b.t.id ? 1 : a.pos - b.pos));
  for (const c of candidates) heap.push(c);
  const selectedByTask = new Map<string, Candidate[]>();
  const out: { trajectory: Trajectory; index: number; score: QualityScore }[] = [];
  while (out.length < k && heap.size > 0) {
    const c = heap.pop() as Candidate;
    const chosen = selectedByTask.get(c.task) ?? [];
    if (c.seenSelected < chosen.length) {
      // Stale: novelty may have dropped since it was scored; rescore against the newly selected.
      for (let i = c.seenSelected; i < chosen.length; i++) c.novelty = Math.min(c.novelty, 1 - jaccard(c.grams, (chosen[i] as Candidate).grams));
      c.seenSelected = chosen.length;
      c.quality = total(c.base, c.novelty);
      heap.push(c);
      continue;
    }
    chosen.push(c);
    selectedByTask.set(c.task, chosen);
    out.push({ trajectory: c.t, index: c.pos, score: { ...c.base, novelty: c.novelty, quality: c.quality } });
  }
  return out;
}

function total(base: Omit<QualityScore, 'novelty' | 'quality'>, novelty: number): number {
  const w = QUALITY_WEIGHTS;
  return w.reward * base.reward + w.outcome * base.outcome + w.length * base.length + w.novelty * novelty + w.freshness * base.freshness;
}

/** A binary heap; `cmp(a, b) < 0` puts `a` nearer the top. */
class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly cmp: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  push(x: T): void {
    const a = this.items;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.cmp(a[i] as T, a[p] as T) >= 0) break;
      [a[i], a[p]] = [a[p] as T, a[i] as T];
      i = p;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0] as T;
    const last = a.pop() as T;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.cmp(a[l] as T, a[m] as T) < 0) m = l;
        if (r < a.length && this.cmp(a[r] as T, a[m] as T) < 0) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m] as T, a[i] as T];
        i = m;
      }
    }
    return top;
  }
}
