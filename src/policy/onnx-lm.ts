import * as ort from 'onnxruntime-node';
import { ConfigError, GymflowError } from '../core/errors.js';
import { openOnnxModel } from '../core/onnx-session.js';
import { POLICY_MANIFEST, type PolicyManifest, readPolicyManifest } from './onnx-manifest.js';

/**
 * A causal LM exported by `python -m gymflow_trainer export-onnx` (docs/policies.md, "Local ONNX policy"),
 * run with onnxruntime-node on the CPU: one decoder graph for prefill and decode, with the KV cache
 * passed in and out (`past_key_values.{i}.key|value` → `present.{i}.key|value`, the Optimum naming).
 *
 * Batch size is 1: a policy decodes one episode at a time; parallel episodes run in parallel policies
 * (share the session through `model-pool.ts`).
 */

/** Session settings. */
export interface OnnxLMOptions {
  /** Threads one `run` may use (onnxruntime intra-op threads). Default 1: many policies side by side. */
  intraOpThreads?: number;
}

/** One layer's cached keys and values, `[1, num_kv_heads, length, head_dim]` each. */
interface LayerCache {
  key: ort.Tensor;
  value: ort.Tensor;
}

/**
 * The KV cache of a sequence: the token ids it covers and, per layer, their keys and values. Immutable:
 * {@link OnnxCausalLM.forward} and {@link OnnxCausalLM.truncate} return new caches.
 */
export interface KvCache {
  /** The ids whose keys/values are cached, in order (positions 0..length-1). */
  readonly tokens: readonly number[];
  readonly layers: readonly LayerCache[];
}

/** The result of a forward pass. */
export interface ForwardResult {
  /** Logits of every new position, row-major `[ids.length, vocab]`. */
  logits: Float32Array;
  /** The cache extended with the new ids. */
  cache: KvCache;
}

/** An exported causal LM and its onnxruntime session. */
export class OnnxCausalLM {
  /** The policy directory. */
  readonly dir: string;
  readonly manifest: PolicyManifest;
  /** Logits per position (the graph's output width; ≥ the tokenizer's size). */
  readonly vocab: number;
  private readonly session: ort.InferenceSession;
  private released = false;

  private constructor(dir: string, manifest: PolicyManifest, session: ort.InferenceSession) {
    this.dir = dir;
    this.manifest = manifest;
    this.session = session;
    this.vocab = manifest.vocab_size;
  }

  /**
   * Loads `DIR/gymflow_policy.json` and `DIR/model.onnx` and checks that the graph has the inputs and
   * outputs the manifest promises.
   *
   * @throws ConfigError naming the file and what is missing.
   */
  static async load(dir: string, options: OnnxLMOptions = {}): Promise<OnnxCausalLM> {
    const manifest = readPolicyManifest(dir);
    const { session, modelPath } = await openOnnxModel(dir, options.intraOpThreads ?? 1);
    const lm = new OnnxCausalLM(dir, manifest, session);
    lm.checkSignature(modelPath);
    return lm;
  }

  private checkSignature(modelPath: string): void {
    const inputs = new Set(this.session.inputNames);
    const outputs = new Set(this.session.outputNames);
    const need = ['input_ids', 'attention_mask', 'position_ids'];
    const needOut = ['logits'];
    for (let i = 0; i < this.manifest.num_layers; i++) {
      need.push(`past_key_values.${i}.key`, `past_key_values.${i}.value`);
      needOut.push(`present.${i}.key`, `present.${i}.value`);
    }
    const missing = [...need.filter((n) => !inputs.has(n)), ...needOut.filter((n) => !outputs.has(n))];
    if (missing.length > 0) {
      throw new ConfigError(
        `${modelPath}: the graph lacks ${missing.join(', ')} (${POLICY_MANIFEST} says num_layers ${this.manifest.num_layers}); ` +
          `inputs: ${[...inputs].join(', ')}; outputs: ${[...outputs].join(', ')}`,
      );
    }
  }

  /** A cache that covers nothing (the start of a sequence). */
  emptyCache(): KvCache {
    const { num_layers: layers, num_kv_heads: heads, head_dim: dim } = this.manifest;
    const empty = (): ort.Tensor => new ort.Tensor('float32', new Float32Array(0), [1, heads, 0, dim]);
    return { tokens: [], layers: Array.from({ length: layers }, () => ({ key: empty(), value: empty() })) };
  }

  /**
   * The cache of the first `length` tokens of `cache` (a prefix: keys and values of a position depend
   * only on the positions before it, so the prefix's cache is exact).
   */
  truncate(cache: KvCache, length: number): KvCache {
    const past = cache.tokens.length;
    if (length >= past) return cache;
    if (length <= 0) return this.emptyCache();
    const { num_kv_heads: heads, head_dim: dim } = this.manifest;
    const cut = (t: ort.Tensor): ort.Tensor => {
      const src = t.data as Float32Array;
      const out = new Float32Array(heads * length * dim);
      for (let h = 0; h < heads; h++) out.set(src.subarray(h * past * dim, (h * past + length) * dim), h * length * dim);
      return new ort.Tensor('float32', out, [1, heads, length, dim]);
    };
    return { tokens: cache.tokens.slice(0, length), layers: cache.layers.map((l) => ({ key: cut(l.key), value: cut(l.value) })) };
  }

  /**
   * Runs `ids` after the cached sequence: positions `past..past+n-1`, attention over all of it.
   *
   * @throws GymflowError `CONTEXT_OVERFLOW` when the sequence would pass `max_position_embeddings`.
   */
  async forward(cache: KvCache, ids: readonly number[]): Promise<ForwardResult> {
    if (this.released) throw new GymflowError('SESSION_RELEASED', `${this.dir}: the ONNX session was released (close() was called)`);
    if (ids.length === 0) throw new RangeError('OnnxCausalLM.forward: no ids to run');
    const past = cache.tokens.length;
    const total = past + ids.length;
    if (total > this.manifest.max_position_embeddings) {
      throw new GymflowError(
        'CONTEXT_OVERFLOW',
        `${this.dir}: ${total} tokens exceed the model's max_position_embeddings ${this.manifest.max_position_embeddings} (${POLICY_MANIFEST})`,
      );
    }
    const n = ids.length;
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, (x) => BigInt(x)), [1, n]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(past + i)), [1, n]),
    };
    cache.layers.forEach((l, i) => {
      feeds[`past_key_values.${i}.key`] = l.key;
      feeds[`past_key_values.${i}.value`] = l.value;
    });
    const out = await this.session.run(feeds);
    const logits = out.logits;
    if (!logits || logits.type !== 'float32') throw new GymflowError('MODEL_OUTPUT', `${this.dir}/model.onnx: no float32 'logits' output`);
    const dims = logits.dims;
    const width = Number(dims[dims.length - 1]);
    if (width !== this.vocab) {
      throw new GymflowError('MODEL_OUTPUT', `${this.dir}/model.onnx: logits have ${width} columns but ${POLICY_MANIFEST} says vocab_size ${this.vocab}`);
    }
    const layers = cache.layers.map((_, i) => {
      const key = out[`present.${i}.key`];
      const value = out[`present.${i}.value`];
      if (!key || !value) throw new GymflowError('MODEL_OUTPUT', `${this.dir}/model.onnx: no present.${i}.key/value output`);
      return { key, value };
    });
    return { logits: logits.data as Float32Array, cache: { tokens: [...cache.tokens, ...ids], layers } };
  }

  /** Frees the native session (later `forward` calls throw). Idempotent. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.session.release();
  }
}

/** Row `row` of row-major `[rows, vocab]` logits. */
export function logitsRow(logits: Float32Array, vocab: number, row: number): Float32Array {
  return logits.subarray(row * vocab, (row + 1) * vocab);
}
