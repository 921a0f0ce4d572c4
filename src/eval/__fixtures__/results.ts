import type { EpisodeRecord } from '../metrics.js';
import { EVAL_RESULT_FORMAT, type EvalResult } from '../result.js';
import { summarizeEpisodes } from '../summarize.js';

/** A result whose episodes have the given rewards on the given tasks (success = reward ≥ 0.5). */
export function evalResultOf(agent: string, rewards: readonly number[], tasks: readonly string[] = rewards.map((_, i) => `t${i}`), envId = 'test/x-v0'): EvalResult {
  const episodes: EpisodeRecord[] = rewards.map((reward, i) => ({
    index: i,
    taskId: tasks[i] as string,
    seed: i,
    trajectoryId: `sha256:${String(i).padStart(64, '0')}`,
    success: reward >= 0.5,
    score: reward >= 0.5 ? 1 : 0,
    reward,
    steps: 3 + (i % 3),
    toolCalls: 2,
    invalidActions: 0,
    tokens: null,
    costUsd: 0,
    reason: 'submitted',
    truncated: false,
    durationMs: 1,
  }));
  return {
    format: EVAL_RESULT_FORMAT,
    envId,
    agent,
    agentName: agent,
    split: 'heldout',
    n: episodes.length,
    seed: 0,
    tasks: new Set(tasks).size,
    confidence: 0.95,
    resamples: 200,
    createdAt: '2025-01-01T00:00:00.000Z',
    metrics: summarizeEpisodes(episodes, { resamples: 200 }),
    episodes,
  };
}
