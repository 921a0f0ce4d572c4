/** Counters every remote policy keeps (per agent instance, across episodes). */
export interface PolicyUsage {
  /** Steps decided. */
  steps: number;
  /** HTTP requests sent, retries included. */
  requests: number;
  /** Retries after a failed request. */
  retries: number;
  promptTokens: number;
  completionTokens: number;
  /** Steps whose output could not be parsed (invalid-call actions). */
  invalidCalls: number;
}

/** All counters at zero. */
export function emptyUsage(): PolicyUsage {
  return { steps: 0, requests: 0, retries: 0, promptTokens: 0, completionTokens: 0, invalidCalls: 0 };
}

/**
 * The sampling seed of one request: a mix of the policy's seed, the episode seed (when given) and the
 * step index, so steps differ but an episode replays with the same seeds. A non-negative 31-bit integer.
 */
export function stepSeed(seed: number, episodeSeed: number | undefined, stepIndex: number): number {
  let h = Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul((episodeSeed ?? 0) | 0, 0x85ebca6b) ^ Math.imul(stepIndex + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return (h >>> 0) & 0x7fffffff;
}

/**
 * {@link stepSeed} of a step of a task's episode: the task id is mixed in too (FNV-1a of its UTF-16 units, then
 * the finaliser). `gymflow collect` gives member g of every group the same episode seed, so without the task a
 * sampling policy would draw the same random numbers for member g of every task: one unlikely draw (a token of
 * probability 1e-6) then hits every group at once — 64 of 64 broken calls in one RL collection
 * (docs/trainer.md, "RL that learns").
 */
export function taskStepSeed(seed: number, episodeSeed: number | undefined, stepIndex: number, taskId: string): number {
  let t = 0x811c9dc5;
  for (let i = 0; i < taskId.length; i++) t = Math.imul(t ^ taskId.charCodeAt(i), 0x01000193);
  let h = stepSeed(seed, episodeSeed, stepIndex) ^ Math.imul(t >>> 0, 0x27d4eb2f);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return (h >>> 0) & 0x7fffffff;
}
