import { ConfigError } from '../core/errors.js';
import type { Rng } from '../core/rng.js';

/**
 * Next-token sampling from raw logits: temperature, nucleus (top-p), seeded through {@link Rng}.
 *
 * - `temperature: 0` is greedy (argmax; ties go to the lowest id), and `topP` is then irrelevant.
 * - Otherwise the distribution is `softmax(logits / temperature)`, cut to the smallest set of most probable
 *   tokens whose mass reaches `topP` (at least one token; ties in probability are ordered by id so the cut
 *   is deterministic), renormalised, and one token is drawn with one `rng.next()`.
 *
 * Arithmetic is in float64 whatever the logits' type, so the same logits and seed give the same token on
 * every platform.
 */

/** Sampling settings. */
export interface SamplingOptions {
  /** 0 = greedy; > 0 scales the logits (default 1). */
  temperature: number;
  /** Nucleus mass in (0, 1] (default 1 = no cut). */
  topP: number;
}

/** Checks sampling settings; `where` names them in the error (`local:runs/policy`). */
export function checkSampling(o: SamplingOptions, where: string): void {
  if (!Number.isFinite(o.temperature) || o.temperature < 0) throw new ConfigError(`${where}: temperature must be a finite number >= 0, got ${o.temperature}`);
  if (!Number.isFinite(o.topP) || o.topP <= 0 || o.topP > 1) throw new ConfigError(`${where}: top-p must be in (0, 1], got ${o.topP}`);
}

/** Index of the largest value (the first one on ties). */
export function argmax(logits: ArrayLike<number>): number {
  let best = 0;
  let bestValue = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i] as number;
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  }
  return best;
}

/**
 * `log softmax(logits)[id]`: the log-probability of `id` under the raw logits (temperature 1, no top-p),
 * computed stably (`x_id - max - log Σ exp(x - max)`).
 */
export function logSoftmaxAt(logits: ArrayLike<number>, id: number): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] as number);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] as number) - max);
  return (logits[id] as number) - max - Math.log(sum);
}

/** Draws the next token id from `logits` (see the module comment). */
export function sampleToken(logits: ArrayLike<number>, o: SamplingOptions, rng: Rng): number {
  if (o.temperature === 0) return argmax(logits);
  const n = logits.length;
  let max = -Infinity;
  for (let i = 0; i < n; i++) max = Math.max(max, logits[i] as number);
  const probs = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const p = Math.exp(((logits[i] as number) - max) / o.temperature);
    probs[i] = p;
    sum += p;
  }
  const u = rng.next();
  if (o.topP >= 1) {
    // Inverse CDF over ids in order; the last id with mass absorbs rounding.
    let target = u * sum;
    let last = 0;
    for (let i = 0; i < n; i++) {
      const p = probs[i] as number;
      if (p === 0) continue;
      last = i;
      target -= p;
      if (target < 0) return i;
    }
    return last;
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (probs[b] as number) - (probs[a] as number) || a - b);
  const keep: number[] = [];
  let mass = 0;
  for (const i of order) {
    keep.push(i);
    mass += probs[i] as number;
    if (mass >= o.topP * sum) break;
  }
  let target = u * mass;
  for (const i of keep) {
    target -= probs[i] as number;
    if (target < 0) return i;
  }
  return keep[keep.length - 1] as number;
}
