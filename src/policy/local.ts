import { performance } from 'node:perf_hooks';
import type { Agent, AgentContext, AgentDecision } from '../core/agent.js';
import { ConfigError } from '../core/errors.js';
import { entropySeed, Rng } from '../core/rng.js';
import { loadTokenizer, type Tokenizer } from '../core/tokenizer.js';
import type { StepMeta, TaskInfo } from '../core/types.js';
import type { AgentInfo } from '../core/wrappers/recorder.js';
import { contextPrompt, renderContext, type StepNote } from './chat-format.js';
import { acquireModel, type ModelLease } from './model-pool.js';
import { type KvCache, logitsRow } from './onnx-lm.js';
import { type PolicyManifest, readPolicyManifest } from './onnx-manifest.js';
import { checkSampling, logSoftmaxAt, sampleToken } from './sampling.js';
import { invalidCall, parseToolCallText } from './tool-call-parsing.js';
import { emptyUsage, taskStepSeed, type PolicyUsage } from './usage.js';
import { defined } from '../core/defined.js';

/**
 * `local:DIR` — a policy that runs an exported ONNX model in-process (docs/policies.md, "Local ONNX
 * policy"). DIR is what `python -m gymflow_trainer export-onnx` writes: `model.onnx`, `tokenizer.json`,
 * `gymflow_policy.json`.
 *
 * Per step: the context is rendered as ChatML exactly as the SFT data was (`chat-format.ts`,
 * `contextPrompt`), tokenized, prefilled, then decoded token by token with the KV cache, sampling with
 * temperature / top-p from a seeded {@link Rng}, until an end-of-turn id (`eos_token_ids`, which include
 * `<|im_end|>`) or `maxNewTokens`. The completion is parsed as a `<tool_call>`; an unreadable one is the
 * invalid-call action, never an exception.
 *
 * Recorded per step (`meta`): `thought`; `tokens.prompt` (the ids the model saw) and `tokens.completion`
 * (the ids it sampled, the end-of-turn id included when it stopped on one); `logprobs[i]` = log-softmax of
 * the **raw** logits (temperature 1, no top-p) at the sampled id — the quantity the RL trainer recomputes
 * from the same ids, whatever temperature the rollout sampled at.
 *
 * KV-cache reuse: within an episode the cache of the previous step's sequence (prompt + completion) is kept;
 * the next prompt usually extends it (same conversation plus a tool result), so only the longest common
 * prefix of token ids is kept and the rest is prefilled. At least the prompt's last token is always run,
 * to get the logits of the next position. A new episode (`reset`, or `stepIndex` 0) starts from an empty
 * cache. Reuse gives the same ids as a cold prefill up to float rounding (the test checks it).
 *
 * Determinism: each step samples from `new Rng(taskStepSeed(seed, episodeSeed, stepIndex, taskId))`, so the
 * same seed, episode seed, task and model give the same episode, and the same seeds on other tasks draw other
 * random numbers.
 */

/** Options of {@link LocalPolicy}. */
export interface LocalPolicyOptions {
  /** The exported policy directory. */
  dir: string;
  /** The registered environment id (named in the system prompt). */
  envId: string;
  /** 0 = greedy (default 1: sample from the model, as RL rollouts do). */
  temperature?: number;
  /** Nucleus mass (default 1). */
  topP?: number;
  /** Base sampling seed (default: a fresh random one). */
  seed?: number;
  /** Completion length limit in tokens (default 256). */
  maxNewTokens?: number;
  /** onnxruntime intra-op threads (default 1, so many policies can run side by side). */
  intraOpThreads?: number;
  /** Reuse the KV cache across the steps of an episode (default true). */
  reuseCache?: boolean;
}

/** Counters of a local policy (per instance, across episodes). */
export interface LocalPolicyStats extends PolicyUsage {
  /** Prompt tokens actually run (the rest came from the KV cache). */
  prefillTokens: number;
  /** Prompt tokens served from the KV cache. */
  cachedTokens: number;
  /** Wall time in prefill and in decode (ms). */
  prefillMs: number;
  decodeMs: number;
  /** Forward passes of one token in decode. */
  decodeSteps: number;
}

/** The default completion limit. */
export const DEFAULT_MAX_NEW_TOKENS = 256;

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** The `local:DIR` policy (see the module comment). */
export class LocalPolicy implements Agent {
  readonly info: AgentInfo;
  readonly stats: LocalPolicyStats = { ...emptyUsage(), prefillTokens: 0, cachedTokens: 0, prefillMs: 0, decodeMs: 0, decodeSteps: 0 };
  /** The directory's manifest (read when the policy is built). */
  readonly manifest: PolicyManifest;
  private readonly options: LocalPolicyOptions;
  private readonly seed: number;
  private readonly temperature: number;
  private readonly topP: number;
  private readonly maxNewTokens: number;
  private readonly eos: ReadonlySet<number>;
  private loading: Promise<{ lease: ModelLease; tokenizer: Tokenizer }> | undefined;
  private closed = false;
  private notes: StepNote[] = [];
  private cache: KvCache | undefined;
  private episodeSeed: number | undefined;
  /** The episode's task: its id goes into the sampling seed ({@link taskStepSeed}). */
  private taskId = '';

  /**
   * Reads and checks the manifest now (a wrong directory fails before any episode); the model and the
   * tokenizer load on first use.
   *
   * @throws ConfigError for a missing/invalid manifest or bad sampling settings.
   */
  constructor(options: LocalPolicyOptions) {
    const where = `local:${options.dir}`;
    this.options = options;
    this.manifest = readPolicyManifest(options.dir);
    this.temperature = options.temperature ?? 1;
    this.topP = options.topP ?? 1;
    checkSampling({ temperature: this.temperature, topP: this.topP }, where);
    this.maxNewTokens = options.maxNewTokens ?? DEFAULT_MAX_NEW_TOKENS;
    if (!Number.isInteger(this.maxNewTokens) || this.maxNewTokens < 1) throw new ConfigError(`${where}: max new tokens must be a positive integer, got ${this.maxNewTokens}`);
    this.seed = options.seed ?? entropySeed();
    this.eos = new Set(this.manifest.eos_token_ids);
    const checkpoint = this.manifest.source?.checkpoint;
    this.info = { name: where, model: this.manifest.model_type, ...defined({ checkpoint }) };
  }

  private load(): Promise<{ lease: ModelLease; tokenizer: Tokenizer }> {
    this.loading ??= (async () => {
      const [lease, tokenizer] = await Promise.all([
        acquireModel(this.options.dir, defined({ intraOpThreads: this.options.intraOpThreads })),
        loadTokenizer(this.options.dir),
      ]);
      if (tokenizer.vocabSize > this.manifest.vocab_size) {
        lease.release();
        throw new ConfigError(`${this.options.dir}: the tokenizer has ${tokenizer.vocabSize} ids but gymflow_policy.json says vocab_size ${this.manifest.vocab_size}`);
      }
      return { lease, tokenizer };
    })();
    return this.loading;
  }

  /** Starts an episode: forgets the notes and the KV cache. */
  reset(task: TaskInfo, seed: number | undefined): void {
    this.notes = [];
    this.cache = undefined;
    this.episodeSeed = seed;
    this.taskId = task.id;
  }

  /** The prompt text for a context (exposed for tests and debugging). */
  prompt(ctx: AgentContext): string {
    return contextPrompt(renderContext(this.options.envId, ctx, this.notes), { system: this.manifest.system_prompt });
  }

  /** Renders, prefills, decodes and parses one step. */
  async act(ctx: AgentContext): Promise<AgentDecision> {
    if (this.closed) throw new ConfigError(`local:${this.options.dir}: act() after close()`);
    const { lease, tokenizer } = await this.load();
    const model = lease.model;
    if (ctx.stepIndex === 0) {
      this.notes = [];
      this.cache = undefined;
    }
    const promptIds = tokenizer.encode(this.prompt(ctx));
    const maxNew = Math.min(this.maxNewTokens, this.manifest.max_position_embeddings - promptIds.length);
    if (maxNew < 1) {
      // The conversation no longer fits the model's context: no output is possible. Reported as an invalid
      // call (the episode goes on to its step limit or ends), never thrown: one long episode must not fail an
      // evaluation or a collection.
      const error = `context overflow: the prompt is ${promptIds.length} tokens and the model's context is ${this.manifest.max_position_embeddings} (max_position_embeddings)`;
      this.stats.invalidCalls++;
      this.stats.steps++;
      this.notes[ctx.stepIndex] = { raw: '' };
      // No tokens recorded: nothing was sampled, so the step has nothing for RL to train on.
      return { action: invalidCall(error, '') };
    }

    // Prefill: keep the cached common prefix, run the rest (at least the last prompt token).
    let cache = this.cache ?? model.emptyCache();
    const keep = this.options.reuseCache === false ? 0 : Math.min(commonPrefix(cache.tokens, promptIds), promptIds.length - 1);
    cache = model.truncate(cache, keep);
    const t0 = performance.now();
    let out = await model.forward(cache, promptIds.slice(keep));
    const t1 = performance.now();
    this.stats.prefillMs += t1 - t0;
    this.stats.prefillTokens += promptIds.length - keep;
    this.stats.cachedTokens += keep;

    const rng = new Rng(taskStepSeed(this.seed, this.episodeSeed, ctx.stepIndex, this.taskId));
    const sampling = { temperature: this.temperature, topP: this.topP };
    const completion: number[] = [];
    const logprobs: number[] = [];
    let logits = logitsRow(out.logits, model.vocab, promptIds.length - keep - 1);
    for (;;) {
      // Ids past the tokenizer (padding rows of an embedding matrix) are never sampled.
      const row = tokenizer.vocabSize < model.vocab ? logits.subarray(0, tokenizer.vocabSize) : logits;
      const id = sampleToken(row, sampling, rng);
      completion.push(id);
      logprobs.push(logSoftmaxAt(logits, id));
      if (this.eos.has(id) || completion.length >= maxNew) break;
      out = await model.forward(out.cache, [id]);
      this.stats.decodeSteps++;
      logits = logitsRow(out.logits, model.vocab, 0);
    }
    this.stats.decodeMs += performance.now() - t1;
    this.cache = out.cache;

    const last = completion[completion.length - 1] as number;
    const text = tokenizer.decode(this.eos.has(last) ? completion.slice(0, -1) : completion);
    const parsed = parseToolCallText(text);
    const note: StepNote = {};
    if (parsed.thought !== undefined) note.thought = parsed.thought;
    if (parsed.error !== undefined) {
      this.stats.invalidCalls++;
      note.raw = text;
    }
    this.notes[ctx.stepIndex] = note;
    this.stats.steps++;
    this.stats.promptTokens += promptIds.length;
    this.stats.completionTokens += completion.length;
    const meta: StepMeta = { tokens: { prompt: promptIds, completion }, logprobs };
    if (parsed.thought !== undefined) meta.thought = parsed.thought;
    return { action: parsed.action, meta };
  }

  /** Returns the shared session (it is freed when no policy uses it). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cache = undefined;
    const loading = this.loading;
    if (loading) {
      try {
        (await loading).lease.release();
      } catch {
        // the load failed: nothing to release
      }
    }
  }
}
