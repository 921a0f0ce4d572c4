/**
 * `gymflow reward rescore REF --config reward.yaml`: a new scored set over the trajectories a set in the store
 * already holds, scored as a pipeline with that `reward` section would score them (activities/score-set.ts, the
 * function the pipeline's Reward stage runs), with the set as its parent. No episode runs again: the behaviour
 * objects are shared with the source set, only the rewards are new.
 */
import { scoreWithRewardSection } from '../../../activities/score-set.js';
import { ConfigError } from '../../core/errors.js';
import { spec } from '../../core/registry.js';
import { summarize, type CollectSummary } from '../../hub/collect.js';
import type { ArtifactStore } from '../../hub/store/store.js';
import { loadTrajectories, putTrajectories } from '../../hub/store/trajectory-set.js';
import type { RewardSection } from '../../loop/config.js';
import { defined } from '../../core/defined.js';

/** The kinds of set a rescore reads. */
const SET_KINDS: ReadonlySet<string> = new Set(['trajectories', 'scored-trajectories']);

/** What {@link rescoreSet} made. */
export interface RescoreResult {
  /** The new `scored-trajectories` set. */
  ref: string;
  name?: string;
  /** The set it rescored (resolved from the name or ref given). */
  source: string;
  sourceKind: string;
  envId: string;
  /** The profile whose rules scored it. */
  profile: string;
  before: Pick<CollectSummary, 'episodes' | 'successRate' | 'meanReward' | 'meanSteps'>;
  after: Pick<CollectSummary, 'episodes' | 'successRate' | 'meanReward' | 'meanSteps'>;
}

const numbers = (s: CollectSummary): RescoreResult['after'] => ({ episodes: s.episodes, successRate: s.successRate, meanReward: s.meanReward, meanSteps: s.meanSteps });

/**
 * Rescores the set `source` (a name or ref of a `trajectories` or `scored-trajectories` set) with `reward` (read
 * from `configFile`, named in errors) and stores the result as a `scored-trajectories` set whose parent is the
 * source; its metadata records the source, the reward section and the summary.
 *
 * @throws ConfigError when the reward section disables scoring, or names no profile for a set whose environment
 *   is not registered; StoreError when `source` is not in the store.
 */
export async function rescoreSet(
  store: ArtifactStore,
  source: string,
  reward: RewardSection,
  options: { configFile: string; name?: string; onScored?: (done: number, total: number) => void },
): Promise<RescoreResult> {
  const ref = await store.resolve(source);
  const entry = await store.statForRead(ref);
  if (entry.format !== 'trajectory-set' || !SET_KINDS.has(entry.kind)) {
    throw new ConfigError(`${source}: a ${entry.kind} artifact (${entry.format}); rescore reads a trajectories or scored-trajectories set`);
  }
  if (!reward.enabled) throw new ConfigError(`${options.configFile} $.enabled: false turns scoring off, so a rescore would only copy ${source}; set it to true (or leave it out)`);
  const trajectories = await loadTrajectories(store, ref);
  if (trajectories.length === 0) throw new ConfigError(`${source}: the set holds no trajectories to rescore`);
  const metaEnv = entry.meta?.['envId'];
  const envId = typeof metaEnv === 'string' ? metaEnv : (trajectories[0]?.envId ?? '');
  let profile = reward.profile;
  if (profile === undefined) {
    try {
      profile = spec(envId).domain;
    } catch {
      throw new ConfigError(`${options.configFile} $.profile: not set, and the set's environment '${envId}' is not registered, so it names no domain; set profile (gymflow profiles lists them)`);
    }
  }
  const started = Date.now();
  const { scored, lineage } = await scoreWithRewardSection(store, trajectories, { ...reward, profile }, envId, defined({ onScored: options.onScored }));
  const after = summarize(scored, { total: 0, byKind: {} }, Date.now() - started);
  const stored = await putTrajectories(store, scored, {
    kind: 'scored-trajectories',
    parents: [ref],
    meta: { envId, rescoredFrom: ref, reward: { ...reward }, layers: lineage, summary: { ...after } },
    ...defined({ name: options.name }),
  });
  return {
    ref: stored.ref,
    ...defined({ name: options.name }),
    source: ref,
    sourceKind: entry.kind,
    envId,
    profile,
    before: numbers(summarize(trajectories, { total: 0, byKind: {} }, 0)),
    after: numbers(after),
  };
}
