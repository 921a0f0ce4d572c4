/**
 * The Reward stage's layers beyond the rules (docs/pipeline.md, "The reward section"):
 *
 * - `judgeRollouts` (CPU queue, its own retry policy `JUDGE_OPTIONS`): every step of the shards' trajectories judged
 *   by the configured model on the configured rubrics, the verdicts stored as one `judgements` artifact. Verdicts are
 *   also cached under the store (`<store>/cache/judge-verdicts.jsonl`, keyed by provider, model, prompt version,
 *   temperature, rubric set and the hash of the step's prompt), so a retried attempt or a repeated stage pays for no
 *   verdict twice. A request is retried inside the activity on 429, 5xx and timeouts with backoff that honours the
 *   server's `retry-after`; an API that refuses a request (401, 403, 400, 404, 422) fails the stage for good.
 * - {@link scoreLayers}: what `scoreRollouts` scores with — the profile (with the chosen judge rubrics), the recorded
 *   verdicts, the calibration file and the learned reward model — and the lineage the scored set's index entry
 *   records about them.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { ConfigError } from '../src/core/errors.js';
import { getProfile } from '../src/core/profiles/index.js';
import type { DomainProfile } from '../src/core/profiles/profile.js';
import { spec } from '../src/core/registry.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { mapPool } from '../src/hub/pool.js';
import type { ArtifactStore } from '../src/hub/store/store.js';
import { loadTrajectories } from '../src/hub/store/trajectory-set.js';
import { RewardSectionSchema, rewardLayers, type RewardSection } from '../src/loop/config.js';
import { durationMs } from '../src/core/duration.js';
import { loadCalibration } from '../src/reward/calibration/index.js';
import { createJudge, resolveJudgeApiKey, type JudgeConfigInput } from '../src/reward/judge/config.js';
import { JudgeError } from '../src/reward/judge/errors.js';
import { RecordedJudge } from '../src/reward/judge/recorded.js';
import { profileWithJudgeRubrics } from '../src/reward/judge/rubric-set.js';
import type { JudgeRunUsage } from '../src/reward/judge/usage.js';
import { OnnxRewardModel } from '../src/reward/learned/onnx-reward-model.js';
import { weightedJudgeRubrics } from '../src/reward/rubrics.js';
import type { ScoreOptions, StepJudgement } from '../src/reward/types.js';
import { openWorkspace, type WorkspaceDefaults } from '../src/runtime/workspace.js';
import { configFailure, parseInput, progressReporter, throwIfCancelled, withFailureMapping } from './common.js';
import { storeRef as ref } from './schemas.js';
import { defined } from '../src/core/defined.js';

const Where = { store: z.string().optional(), workDir: z.string().optional() };

/** The judge's verdict cache of a store: one JSONL file beside the store's objects, shared by every worker using it. */
export function judgeCachePath(store: ArtifactStore): string {
  return path.join(store.root, 'cache', 'judge-verdicts.jsonl');
}

/** HTTP statuses of a request the judge API refused: no retry can fix them. */
const REFUSED = new Set([400, 401, 403, 404, 422]);

/** The input of `judgeRollouts`: the configuration's `reward` section (with `judge` set), the shards and a name. */
export const JudgeRolloutsInputSchema = z.object({
  envId: z.string(),
  shards: z.array(ref).min(1),
  reward: RewardSectionSchema.refine((r) => r.judge !== undefined, { message: 'reward.judge is not set', path: ['judge'] }),
  name: z.string().optional(),
  ...Where,
});

/** What `judgeRollouts` returns (and the workflow keeps). */
export interface JudgeRolloutsResult {
  /** The `judgements` artifact: `{ format, provider, model, rubrics, trajectories: { [id]: StepJudgement[] } }`. */
  ref: string;
  /** `provider:model`. */
  judge: string;
  /** Steps of the trajectories, and steps that got a verdict. */
  steps: number;
  judged: number;
  /** Calls and tokens of this stage, every attempt included (from the heartbeats of the attempts before). */
  usage: Pick<JudgeRunUsage, 'requests' | 'cacheHits' | 'inputTokens' | 'outputTokens' | 'failures' | 'retries' | 'repairs'>;
  /** Whether `reward.judge.budget` stopped the judge before every step was asked. */
  budgetExhausted: boolean;
}

/** The domain profile of a reward section: its `profile`, else the environment's domain. */
function sectionProfile(reward: RewardSection, envId: string): DomainProfile {
  try {
    return getProfile(reward.profile ?? spec(envId).domain);
  } catch (err) {
    throw new ConfigError(`pipeline config $.reward.profile: ${(err as Error).message}`);
  }
}

/** The profile the judge and the scorer use: the section's, with `judge.rubrics` when given. */
export function judgingProfile(reward: RewardSection, envId: string): DomainProfile {
  const profile = sectionProfile(reward, envId);
  const chosen = reward.judge?.rubrics;
  return chosen === undefined ? profile : profileWithJudgeRubrics(profile, chosen, '$.reward.judge.rubrics');
}

/** Spending carried over from the previous attempts (their last heartbeat's details). */
const SpentSchema = z.object({ requests: z.number(), inputTokens: z.number(), outputTokens: z.number(), cacheHits: z.number(), retries: z.number(), repairs: z.number(), failures: z.number() });
type Spent = z.infer<typeof SpentSchema>;
const NOTHING_SPENT: Spent = { requests: 0, inputTokens: 0, outputTokens: 0, cacheHits: 0, retries: 0, repairs: 0, failures: 0 };

function spentBefore(): Spent {
  const details: unknown = Context.current().info.heartbeatDetails;
  const parsed = z.object({ spent: SpentSchema }).safeParse(details);
  return parsed.success ? parsed.data.spent : NOTHING_SPENT;
}

/** A sum of two spendings. */
function plus(a: Spent, b: Spent): Spent {
  return {
    requests: a.requests + b.requests,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheHits: a.cacheHits + b.cacheHits,
    retries: a.retries + b.retries,
    repairs: a.repairs + b.repairs,
    failures: a.failures + b.failures,
  };
}

/** The budget left after `spent` (0 when the attempts before spent it: the judge then asks nothing). */
function remaining(budget: { calls?: number | undefined; tokens?: number | undefined } | undefined, spent: Spent): { calls?: number; tokens?: number } | undefined {
  if (budget === undefined) return undefined;
  const out: { calls?: number; tokens?: number } = {};
  if (budget.calls !== undefined) out.calls = Math.max(budget.calls - spent.requests, 0);
  if (budget.tokens !== undefined) out.tokens = Math.max(budget.tokens - spent.inputTokens - spent.outputTokens, 0);
  return out;
}

/** A judge failure as the stage's failure: refused requests for good, an unreachable API retryably. */
function judgeFailure(err: JudgeError, keyEnv: string): ApplicationFailure {
  if (err.status !== undefined && REFUSED.has(err.status)) {
    const hint = err.status === 401 || err.status === 403 ? ` (check the workers' ${keyEnv})` : err.status === 404 ? ' (check $.reward.judge.model and base_url)' : '';
    return ApplicationFailure.nonRetryable(`reward.judge: the judge API refused the request${hint}: ${err.message}`, 'JUDGE_REFUSED');
  }
  return ApplicationFailure.retryable(`reward.judge: ${err.message}`, 'JUDGE_UNAVAILABLE');
}

/** The reward activities beyond the rules. */
export function createRewardActivities(defaults: WorkspaceDefaults) {
  return {
    /**
     * Judges every step of the shards' trajectories (see the module comment). Heartbeats steps done and what was
     * spent; a retried attempt starts from the previous attempts' spending, so the budget covers them all.
     */
    async judgeRollouts(input: z.input<typeof JudgeRolloutsInputSchema>): Promise<JudgeRolloutsResult> {
      const o = parseInput(JudgeRolloutsInputSchema, input, 'judgeRollouts');
      const j = o.reward.judge as NonNullable<RewardSection['judge']>;
      const keyEnv = j.api_key_env ?? (j.provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY');
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        const before = spentBefore();
        const profile = judgingProfile(o.reward, o.envId);
        const rubrics = weightedJudgeRubrics(profile);
        const config: JudgeConfigInput = {
          provider: j.provider,
          model: j.model,
          ...defined({ baseURL: j.base_url }),
          apiKeyEnv: keyEnv,
          concurrency: j.concurrency,
          timeoutMs: durationMs(j.timeout),
          retry: { maxRetries: j.max_retries },
          temperature: j.temperature,
          maxTokens: j.max_tokens,
          cachePath: judgeCachePath(ws.store),
          ...defined({ budget: remaining(j.budget, before) }),
        };
        let judge;
        try {
          judge = createJudge(config);
        } catch (err) {
          if (err instanceof ConfigError) throw configFailure(`pipeline config $.reward.judge.api_key_env: ${err.message} on the CPU workers`);
          throw err;
        }
        const all: Trajectory[] = [];
        for (const shard of o.shards) all.push(...(await loadTrajectories(ws.store, shard)));
        const total = all.reduce((n, t) => n + t.steps.length, 0);
        const report = progressReporter('reward', 'steps judged');
        const spent = (): Spent => plus(before, judge.usage());
        let done = 0;
        const verdicts: Record<string, StepJudgement[]> = {};
        const signal = Context.current().cancellationSignal;
        try {
          // The judge's semaphore bounds the requests; trajectories are started as fast as it lets them through.
          await mapPool(all, j.concurrency, async (t) => {
            if (signal.aborted) return;
            verdicts[t.id] = rubrics.length === 0 ? [] : await judge.judge(t, profile, rubrics);
            done += t.steps.length;
            report(done, total, { done, total, spent: spent() });
          });
        } catch (err) {
          // Verdicts already paid for are in the cache file: the next attempt reads them. What this attempt spent,
          // the failed calls included, goes into its last heartbeat, so the retry's budget counts it.
          Context.current().heartbeat({ done, total, spent: spent() });
          await judge.flush().catch(() => undefined);
          if (err instanceof JudgeError) throw judgeFailure(err, keyEnv);
          throw err;
        }
        await judge.flush();
        throwIfCancelled();
        const usage = spent();
        const judged = Object.values(verdicts).reduce((n, v) => n + v.length, 0);
        const budgetExhausted = judge.budget().exhausted;
        const entry = await ws.store.putJson(
          { format: 'gymflow.judgements', provider: j.provider, model: j.model, rubrics, trajectories: verdicts },
          {
            kind: 'judgements',
            parents: o.shards,
            meta: { provider: j.provider, model: j.model, ...defined({ baseURL: j.base_url }), rubrics: rubrics.map((r) => r.name), steps: total, judged, usage, budgetExhausted },
            ...defined({ name: o.name }),
          },
        );
        const { requests, cacheHits, inputTokens, outputTokens, failures, retries, repairs } = usage;
        return { ref: entry.ref, judge: `${j.provider}:${j.model}`, steps: total, judged, usage: { requests, cacheHits, inputTokens, outputTokens, failures, retries, repairs }, budgetExhausted };
      });
    },
  };
}

/** sha256 of a file's bytes, streamed. */
async function fileHash(file: string, hash = createHash('sha256')): Promise<typeof hash> {
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash;
}

/** sha256 over a directory's top-level files (names and bytes, in name order): the identity of an exported model. */
async function directoryHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name).sort();
  for (const name of entries) {
    hash.update(`${name}\0`);
    await fileHash(path.join(dir, name), hash);
  }
  return `sha256:${hash.digest('hex')}`;
}

/** The layers `scoreRollouts` scores with, what the scored set's lineage says of them, and what to release after. */
export interface ScoreLayers {
  options: Omit<ScoreOptions, 'referenceSteps'>;
  lineage: Record<string, unknown>;
  release(): Promise<void>;
}

/**
 * Builds the scorer's layers of a reward section: the profile (with `judge.rubrics`), the judge's recorded verdicts
 * (`judgements`, from `judgeRollouts`), the calibration file and the learned reward model. A file that cannot be
 * read fails for good, naming the field.
 */
export async function scoreLayers(store: ArtifactStore, reward: RewardSection, envId: string, judgements: string | undefined): Promise<ScoreLayers> {
  const profile = judgingProfile(reward, envId);
  const options: ScoreLayers['options'] = { profile };
  const lineage: Record<string, unknown> = { layers: rewardLayers(reward), profile: profile.name };
  if (reward.judge !== undefined && judgements !== undefined) {
    const doc = z
      .object({ trajectories: z.record(z.string(), z.array(z.object({ stepIndex: z.number(), rubrics: z.record(z.string(), z.object({ score: z.number(), rationale: z.string().optional() })) }))) })
      .parse(await store.getJson(judgements));
    const verdicts = new Map(Object.entries(doc.trajectories) as [string, StepJudgement[]][]);
    options.judge = new RecordedJudge(`judge:${reward.judge.provider}:${reward.judge.model}`, verdicts);
    lineage['judge'] = {
      provider: reward.judge.provider,
      model: reward.judge.model,
      ...defined({ baseURL: reward.judge.base_url }),
      rubrics: weightedJudgeRubrics(profile).map((r) => r.name),
      judgements,
    };
  }
  if (reward.calibration !== undefined) {
    const file = reward.calibration.path;
    try {
      options.calibration = await loadCalibration(file);
    } catch (err) {
      throw new ConfigError(`pipeline config $.reward.calibration.path: ${(err as Error).message}`);
    }
    lineage['calibration'] = { path: file, sha256: `sha256:${(await fileHash(file)).digest('hex')}`, kind: options.calibration.kind };
  }
  let model: OnnxRewardModel | undefined;
  if (reward.learned !== undefined) {
    const dir = reward.learned.path;
    try {
      model = await OnnxRewardModel.load(dir);
    } catch (err) {
      throw new ConfigError(`pipeline config $.reward.learned.path: ${(err as Error).message}`);
    }
    options.learned = { scorer: model, weight: reward.learned.weight };
    lineage['learned'] = { path: dir, sha256: await directoryHash(dir), name: model.name, weight: reward.learned.weight };
  }
  return { options, lineage, release: async () => model?.release() };
}

/**
 * Checks what a reward section names before any work (the `checkConfig` activity, on a CPU worker like those that
 * score): the judge's rubrics and its API key variable, the calibration file and the learned model. Each problem
 * names its field.
 */
export async function checkRewardSection(reward: RewardSection, envId: string): Promise<void> {
  judgingProfile(reward, envId);
  const j = reward.judge;
  if (j !== undefined) {
    try {
      resolveJudgeApiKey({ provider: j.provider, ...defined({ apiKeyEnv: j.api_key_env }) });
    } catch (err) {
      throw new ConfigError(`pipeline config $.reward.judge${j.api_key_env !== undefined ? '.api_key_env' : ''}: ${(err as Error).message} on the CPU workers`);
    }
  }
  if (reward.calibration !== undefined) {
    try {
      await loadCalibration(reward.calibration.path);
    } catch (err) {
      throw new ConfigError(`pipeline config $.reward.calibration.path: ${(err as Error).message}`);
    }
  }
  if (reward.learned !== undefined) {
    let model: OnnxRewardModel;
    try {
      model = await OnnxRewardModel.load(reward.learned.path);
    } catch (err) {
      throw new ConfigError(`pipeline config $.reward.learned.path: ${(err as Error).message}`);
    }
    await model.release();
  }
}
