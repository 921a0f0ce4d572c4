import { ConfigError } from '../../core/errors.js';
import { gradePrediction, type GradedInstance, type GradeOptions, type Prediction } from './harness.js';
import type { SweInstance } from './instances.js';
import { specFor, type LoadedSpecs } from './specs.js';

/** SWE-bench's run report (`make_run_report`, schema version 2): counts and the sorted ids of each outcome. */
export interface RunReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  error_ids: string[];
  schema_version: 2;
}

/**
 * The run report over `instances` (the data set evaluated) from the graded predictions: an instance without a
 * prediction is incomplete; completed = resolved + unresolved (the tests ran); an empty patch and an error are
 * neither.
 */
export function makeRunReport(instances: readonly SweInstance[], predictions: readonly Prediction[], graded: readonly GradedInstance[]): RunReport {
  const ids = (o: GradedInstance['outcome']): string[] => graded.filter((g) => g.outcome === o).map((g) => g.instanceId).sort();
  const predicted = new Set(predictions.map((p) => p.instance_id));
  const resolved = ids('resolved');
  const unresolved = ids('unresolved');
  const completed = [...resolved, ...unresolved].sort();
  const empty = ids('empty_patch');
  const errors = ids('error');
  const incomplete = instances.map((i) => i.instanceId).filter((id) => !predicted.has(id)).sort();
  return {
    total_instances: instances.length,
    submitted_instances: predictions.length,
    completed_instances: completed.length,
    resolved_instances: resolved.length,
    unresolved_instances: unresolved.length,
    empty_patch_instances: empty.length,
    error_instances: errors.length,
    completed_ids: completed,
    incomplete_ids: incomplete,
    empty_patch_ids: empty,
    submitted_ids: [...predicted].sort(),
    resolved_ids: resolved,
    unresolved_ids: unresolved,
    error_ids: errors,
    schema_version: 2,
  };
}

/** Options of {@link gradePredictions}. */
export interface GradePredictionsOptions extends GradeOptions {
  instances: readonly SweInstance[];
  predictions: readonly Prediction[];
  /** The spec table (default: {@link specFor}'s default spec for every repository). */
  specs?: LoadedSpecs | undefined;
  /** Predictions graded at once (default 1). Images of one repository/version are built once either way. */
  concurrency?: number | undefined;
  /** Called as each prediction is graded. */
  onGraded?: ((g: GradedInstance) => void) | undefined;
}

/**
 * Grades predictions made elsewhere against SWE-bench instances ({@link gradePrediction} for each) and makes the
 * run report. Every spec is looked up before any image is built, so a missing one fails at once.
 *
 * @throws ConfigError when a prediction names an instance that is not in `instances`, or an instance has no spec.
 */
export async function gradePredictions(o: GradePredictionsOptions): Promise<{ report: RunReport; graded: GradedInstance[] }> {
  const byId = new Map(o.instances.map((i) => [i.instanceId, i]));
  const unknown = o.predictions.filter((p) => !byId.has(p.instance_id)).map((p) => p.instance_id);
  if (unknown.length) throw new ConfigError(`predictions for instances not in the instances file: ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? `, … (${unknown.length})` : ''}`);
  const jobs = o.predictions.map((p) => {
    const instance = byId.get(p.instance_id) as SweInstance;
    return { p, instance, spec: specFor(instance, o.specs) };
  });
  const graded: GradedInstance[] = new Array<GradedInstance>(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      const job = jobs[i] as (typeof jobs)[number];
      const g = await gradePrediction(job.instance, job.spec, job.p, o);
      graded[i] = g;
      o.onGraded?.(g);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? 1, jobs.length)) }, worker));
  return { report: makeRunReport(o.instances, o.predictions, graded), graded };
}
