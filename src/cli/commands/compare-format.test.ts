import { describe, expect, it } from 'vitest';
import { compare } from '../../eval/compare.js';
import type { EpisodeRecord } from '../../eval/metrics.js';
import { EVAL_RESULT_FORMAT, type EvalResult } from '../../eval/result.js';
import { summarizeEpisodes } from '../../eval/summarize.js';
import { formatCompareTables } from './compare.js';

/** An eval result whose episodes have these rewards, one task each. */
function result(agent: string, rewards: readonly number[]): EvalResult {
  const episodes: EpisodeRecord[] = rewards.map((reward, i) => ({
    index: i,
    taskId: `t${i}`,
    seed: i,
    trajectoryId: `sha256:${String(i).padStart(64, '0')}`,
    success: reward >= 0.5,
    score: reward >= 0.5 ? 1 : 0,
    reward,
    steps: 3,
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
    envId: 'test/x-v0',
    agent,
    agentName: agent,
    split: 'heldout',
    n: episodes.length,
    seed: 0,
    tasks: episodes.length,
    confidence: 0.95,
    resamples: 200,
    createdAt: '2025-01-01T00:00:00.000Z',
    metrics: summarizeEpisodes(episodes, { resamples: 200 }),
    episodes,
  };
}

describe('formatCompareTables', () => {
  it('marks a Mann–Whitney p-value from the exact distribution, and says what the mark means', () => {
    // 5 vs 5 rewards without ties: exact; scipy.stats.mannwhitneyu([.9,.8,.7,.95,.85], [.1,.2,.3,.15,.25]) -> p = 2/252
    const text = formatCompareTables(compare([result('a', [0.9, 0.8, 0.7, 0.95, 0.85]), result('b', [0.1, 0.2, 0.3, 0.15, 0.25])], { resamples: 100 }));
    expect(text).toMatch(/^a - b .* 0\.0079 \(0\.0079\) exact /m);
    expect(text).toMatch(/^MWU p marked exact: exact null distribution of U \(no ties, a group of <= 8\); unmarked: normal approximation$/m);
  });

  it('prints asymptotic p-values unmarked and no note when every one is asymptotic (ties)', () => {
    const text = formatCompareTables(compare([result('a', [1, 1, 0.5, 1, 1]), result('b', [0, 0.5, 0, 0, 0.5])], { resamples: 100 }));
    expect(text).not.toMatch(/exact/);
  });
});
