/**
 * The pipeline's activities, grouped by the task queue whose workers run them (docs/pipeline.md):
 * CPU (`gymflow`): configuration checks, tasks, rollouts, reward (the judge included), export, evaluation, retention, waiting for
 * the policy server;
 * GPU (`gymflow-gpu`): trainer configuration checks, the initial policy, training, ONNX export, serving the policy,
 * the loop's TensorBoard curves.
 */
import { registerBuiltinEnvs } from '../src/envs/register.js';
import type { WorkspaceDefaults } from '../src/runtime/workspace.js';
import { createCurveActivities } from './curves.js';
import { createIngestActivities } from './ingest.js';
import { createRetentionActivities } from './retention.js';
import { createRewardActivities } from './reward.js';
import { createRolloutActivities } from './rollouts.js';
import { createServeActivities } from './serve.js';
import { createSetupActivities } from './setup.js';
import { createTrainActivities } from './train.js';

/** Options shared by every activity of a worker. */
export interface ActivityDefaults extends WorkspaceDefaults {
  /** Grace between SIGTERM and SIGKILL of a cancelled trainer (default 10 s). */
  killGraceMs?: number;
}

/** Every pipeline activity (the type workflows proxy). */
export function createPipelineActivities(defaults: ActivityDefaults = {}) {
  registerBuiltinEnvs();
  const setup = createSetupActivities(defaults);
  const rollouts = createRolloutActivities(defaults);
  const reward = createRewardActivities(defaults);
  const train = createTrainActivities(defaults);
  const retention = createRetentionActivities(defaults);
  const serve = createServeActivities(defaults);
  const curves = createCurveActivities();
  const ingest = createIngestActivities(defaults);
  return { ...setup, ...rollouts, ...reward, ...train, ...retention, ...serve, ...curves, ...ingest };
}

/** The activity functions of gymflow's pipeline. */
export type PipelineActivities = ReturnType<typeof createPipelineActivities>;

/** The activities of the CPU task queue. */
export function cpuActivities(defaults: ActivityDefaults = {}) {
  const a = createPipelineActivities(defaults);
  return {
    checkConfig: a.checkConfig,
    planTasks: a.planTasks,
    collectShard: a.collectShard,
    judgeRollouts: a.judgeRollouts,
    scoreRollouts: a.scoreRollouts,
    exportTrainingData: a.exportTrainingData,
    evaluatePolicy: a.evaluatePolicy,
    pruneModels: a.pruneModels,
    awaitPolicyServer: a.awaitPolicyServer,
    scanLogs: a.scanLogs,
    convertLogs: a.convertLogs,
    scoreLogs: a.scoreLogs,
    recordIngested: a.recordIngested,
  };
}

/** The activities of the GPU task queue. */
export function gpuActivities(defaults: ActivityDefaults = {}) {
  const a = createPipelineActivities(defaults);
  return {
    checkTrainerConfigs: a.checkTrainerConfigs,
    preparePolicy: a.preparePolicy,
    train: a.train,
    exportPolicy: a.exportPolicy,
    servePolicy: a.servePolicy,
    writeLoopCurves: a.writeLoopCurves,
  };
}
