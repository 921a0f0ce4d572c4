import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { ConfigError } from './errors.js';

/**
 * Opens `<dir>/model.onnx` for CPU inference the way every gymflow ONNX model runs: all graph optimisations,
 * sequential execution, one inter-op thread and `intraOpThreads` intra-op threads (default 1, so many models
 * can run side by side; 0 = onnxruntime's default).
 *
 * @throws ConfigError for a bad thread count or a file onnxruntime cannot load (naming the file).
 */
export async function openOnnxModel(dir: string, intraOpThreads = 1): Promise<{ session: ort.InferenceSession; modelPath: string }> {
  if (!Number.isInteger(intraOpThreads) || intraOpThreads < 0) {
    throw new ConfigError(`intra-op threads must be an integer >= 0 (0 = onnxruntime's default), got ${intraOpThreads}`);
  }
  const modelPath = join(dir, 'model.onnx');
  try {
    const session = await ort.InferenceSession.create(modelPath, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      intraOpNumThreads: intraOpThreads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
    return { session, modelPath };
  } catch (err) {
    throw new ConfigError(`${modelPath}: onnxruntime cannot load the model (${(err as Error).message})`);
  }
}
