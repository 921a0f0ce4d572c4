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
