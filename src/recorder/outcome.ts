import type { Outcome } from '../core/trajectory.js';

/**
 * Outcome constructors shared by the adapters, so every adapter uses the same vocabulary of reasons:
 *
 * | reason | flag | meaning |
 * | --- | --- | --- |
 * | `submitted` | terminated | the agent submitted (SWE-agent `submit`, mini-swe-agent's submit echo) |
 * | `finished` | terminated | the agent called its finish tool (OpenHands `finish`) |
 * | `responded` | terminated | the agent ended its turn with a text answer (chat formats) |
 * | `awaiting_user_input` | terminated | OpenHands handed control back to the user |
 * | `forfeited` | terminated | the agent gave up (`exit_forfeit`) |
 * | `cost_limit`, `context_limit`, `step_limit`, `timeout`, `max_tokens` | truncated | a limit ended it |
 * | `error` | truncated | the run crashed (API error, harness error): outside the agent's control |
 * | `stuck` | truncated | the harness stopped an agent caught in a loop (OpenHands V1's stuck detector) |
 * | `incomplete` | neither | the log stops mid-episode (a call without its result) |
 * | `unknown` | neither | the log says nothing about how it ended |
 *
 * Foreign logs rarely say whether the task was solved: `success` is `false` and `score` 0 unless the log
 * itself records a verdict (a reward, a `success` flag); adapters then set `metadata.successKnown`.
 */

/** The episode ended by the agent's own decision. */
export function terminated(reason: string, verdict: { success?: boolean; score?: number } = {}): Outcome {
  const success = verdict.success ?? false;
  return { success, score: verdict.score ?? (success ? 1 : 0), terminated: true, truncated: false, reason };
}

/** A limit or a crash ended the episode. */
export function truncated(reason: string, verdict: { success?: boolean; score?: number } = {}): Outcome {
  const success = verdict.success ?? false;
  return { success, score: verdict.score ?? (success ? 1 : 0), terminated: false, truncated: true, reason };
}

/** The log does not show the episode ending (`incomplete`) or does not say how (`unknown`). */
export function unfinished(reason: 'incomplete' | 'unknown' = 'unknown', verdict: { success?: boolean; score?: number } = {}): Outcome {
  const success = verdict.success ?? false;
  return { success, score: verdict.score ?? (success ? 1 : 0), terminated: false, truncated: false, reason };
}

/** Clamps a reward into the outcome score's [0, 1] range. */
export function clampScore(value: number): number {
  return Math.min(1, Math.max(0, value));
}
