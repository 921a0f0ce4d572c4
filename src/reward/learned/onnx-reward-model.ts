import * as ort from 'onnxruntime-node';
import { ConfigError, GymflowError } from '../../core/errors.js';
import { openOnnxModel } from '../../core/onnx-session.js';
import { loadTokenizer, type Tokenizer } from '../../core/tokenizer.js';
import type { Trajectory } from '../../core/trajectory.js';
import type { LearnedScorer } from '../types.js';
import { readRewardModelManifest, REWARD_MODEL_MANIFEST, type RewardModelManifest } from './manifest.js';
import { encodeStepInputs } from './step-input.js';

/**
 * The learned step-level reward model, exported by `python -m gymflow_trainer export-onnx` with
 * `kind: reward_model`, run with onnxruntime-node on the CPU. `model.onnx` takes right-padded `input_ids`
 * and `attention_mask` (int64 `[batch, seq]`) and returns `scores` (float32 `[batch]`, the step score
 * σ(r) ∈ (0, 1) read at each row's last attended token).
 */

/** Session and batching settings. */
export interface OnnxRewardModelOptions {
  /** onnxruntime intra-op threads (default 1; 0 = onnxruntime's default). */
  intraOpThreads?: number;
  /** Step inputs per `run` (default 8). Rows of a batch are right-padded to the longest. */
  batchSize?: number;
}

/** An exported reward model: tokenizer, manifest and onnxruntime session. */
export class OnnxRewardModel implements LearnedScorer {
  readonly name: string;
  readonly dir: string;
  readonly manifest: RewardModelManifest;
  readonly tokenizer: Tokenizer;
  private readonly session: ort.InferenceSession;
  private readonly batchSize: number;
  private released = false;

  private constructor(dir: string, manifest: RewardModelManifest, tokenizer: Tokenizer, session: ort.InferenceSession, batchSize: number) {
    this.dir = dir;
    this.name = `onnx:${dir}`;
    this.manifest = manifest;
    this.tokenizer = tokenizer;
    this.session = session;
    this.batchSize = batchSize;
  }

  /**
   * Loads a reward-model directory (`gymflow_reward_model.json`, `model.onnx`, `tokenizer.json`) and checks
   * that the graph has the inputs and output the format promises.
   *
   * @throws ConfigError naming the file and what is wrong.
   *
   * @example
   * ```ts
   * const rm = await OnnxRewardModel.load('runs/rm-onnx');
   * const scores = await rm.scoreSteps(trajectory); // one score in (0, 1) per step
   * await rm.release();
   * ```
   */
  static async load(dir: string, options: OnnxRewardModelOptions = {}): Promise<OnnxRewardModel> {
    const manifest = readRewardModelManifest(dir);
    const batchSize = options.batchSize ?? 8;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new ConfigError(`batchSize must be a positive integer, got ${batchSize}`);
    const tokenizer = await loadTokenizer(dir);
    const { session, modelPath } = await openOnnxModel(dir, options.intraOpThreads ?? 1);
    const missing = [
      ...['input_ids', 'attention_mask'].filter((n) => !session.inputNames.includes(n)),
      ...['scores'].filter((n) => !session.outputNames.includes(n)),
    ];
    if (missing.length > 0) {
      await session.release();
      throw new ConfigError(
        `${modelPath}: the graph lacks ${missing.join(', ')} (a ${REWARD_MODEL_MANIFEST} directory needs inputs input_ids, attention_mask and output scores); ` +
          `inputs: ${session.inputNames.join(', ')}; outputs: ${session.outputNames.join(', ')}`,
      );
    }
    return new OnnxRewardModel(dir, manifest, tokenizer, session, batchSize);
  }

  /** The longest step input in tokens (longer ones are truncated, see `step-input.ts`). */
  get maxLength(): number {
    return this.manifest.max_length;
  }

  /** Scores of tokenised step inputs, in order (batched, right-padded). */
  async scoreIds(rows: readonly (readonly number[])[]): Promise<Float64Array> {
    if (this.released) throw new GymflowError('SESSION_RELEASED', `${this.dir}: the ONNX session was released (release() was called)`);
    const out = new Float64Array(rows.length);
    const pad = BigInt(this.manifest.pad_token_id);
    for (let start = 0; start < rows.length; start += this.batchSize) {
      const batch = rows.slice(start, start + this.batchSize);
      const width = Math.max(1, ...batch.map((r) => r.length));
      const ids = new BigInt64Array(batch.length * width).fill(pad);
      const mask = new BigInt64Array(batch.length * width);
      batch.forEach((r, b) => {
        if (r.length === 0) throw new RangeError(`OnnxRewardModel.scoreIds: row ${start + b} is empty`);
        for (let j = 0; j < r.length; j++) {
          ids[b * width + j] = BigInt(r[j] as number);
          mask[b * width + j] = 1n;
        }
      });
      const result = await this.session.run({
        input_ids: new ort.Tensor('int64', ids, [batch.length, width]),
        attention_mask: new ort.Tensor('int64', mask, [batch.length, width]),
      });
      const scores = result.scores;
      if (!scores || scores.type !== 'float32' || scores.data.length !== batch.length) {
        throw new GymflowError('MODEL_OUTPUT', `${this.dir}/model.onnx: expected float32 'scores' of length ${batch.length}`);
      }
      const data = scores.data as Float32Array;
      for (let b = 0; b < batch.length; b++) out[start + b] = data[b] as number;
    }
    return out;
  }

  /** One score in (0, 1) per step of `t` (each step read with the steps before it). */
  async scoreSteps(t: Trajectory): Promise<Float64Array> {
    if (t.steps.length === 0) return new Float64Array(0);
    return this.scoreIds(encodeStepInputs(this.tokenizer, t, this.manifest.max_length));
  }

  /** Frees the native session (later calls throw). Idempotent. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.session.release();
  }
}
