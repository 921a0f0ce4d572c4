/**
 * The small SFT loop that the durability tests and the history recorder run: expert rollouts on
 * `gymflow/tool-use-v0`, a few steps of a 1-layer tiny model, expert evaluation (no ONNX export needed).
 */
import { join } from 'node:path';
import { parsePipelineConfig, type PipelineConfig } from '../../src/loop/config.js';

/** The 1-layer tiny policy the small loops train. */
export const TINY_POLICY = { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1 } as const;

/** What a small loop sets itself: its collection, training and number of iterations. */
export interface SmallLoop {
  collect: { tasks: number; shard_size: number; concurrency: number };
  train: Record<string, unknown>;
  max_iterations: number;
}

/**
 * A validated small-loop configuration named `name`, with its store and work directory under `dir`; `source`
 * names it in validation messages.
 */
export function smallLoopConfig(name: string, dir: string, source: string, loop: SmallLoop): PipelineConfig {
  return parsePipelineConfig(
    {
      name,
      env: 'gymflow/tool-use-v0',
      store: join(dir, 'store'),
      work_dir: join(dir, 'work'),
      policy: { init: { tiny: TINY_POLICY } },
      collect: { agent: 'expert', ...loop.collect },
      export: { success_only: true },
      train: { command: 'sft', ...loop.train },
      eval: { agent: 'expert', tasks: 2, baseline: false },
      max_iterations: loop.max_iterations,
    },
    source,
  );
}
