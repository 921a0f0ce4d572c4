/**
 * `gymflow eval --benchmark swe-bench`: grades predictions in SWE-bench's format (made elsewhere, or by a gymflow
 * agent with `--agent`) against SWE-bench instances, by the harness's rules, and writes its report.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import { checkNewOutput, writeFileAtomically } from '../../core/output-file.js';
import { registerBuiltinEnvs } from '../../envs/register.js';
import { agentPredictions, type AgentEpisode } from '../../envs/swe/agent-predictions.js';
import { gradePredictions } from '../../envs/swe/benchmark.js';
import type { GradedInstance, InstanceReport, Prediction } from '../../envs/swe/harness.js';
import { loadInstances, selectInstances } from '../../envs/swe/instances.js';
import { loadPredictions } from '../../envs/swe/predictions.js';
import { loadSpecs } from '../../envs/swe/specs.js';
import { resolveAgent } from '../../policy/specs.js';
import { resolveConfig, type SandboxConfig } from '../../sandbox/config.js';
import { formatTable } from '../table.js';
import { printJson } from '../options.js';
import { defined } from '../../core/defined.js';

/** The benchmarks `--benchmark` knows. */
export const BENCHMARKS = ['swe-bench'] as const;

/** The options of `gymflow eval` a benchmark run reads. */
export interface SweBenchOpts {
  instances?: string;
  predictions?: string;
  agent?: string;
  repos?: string;
  repoUrl?: string;
  specs?: string;
  baseImage?: string;
  instanceIds?: string[];
  /** Sandbox config overrides of the grading (and episode) containers, e.g. `{"workDirMiB": 2048, "memoryMiB": 4096}`. */
  sandbox?: Record<string, unknown>;
  timeout: number;
  concurrency: number;
  seed: number;
  out?: string;
  logDir?: string;
  savePredictions?: string;
  json?: boolean;
  force?: boolean;
}

/** Commander parser for `--instance-ids a,b,c`. */
export function parseIdList(value: string): string[] {
  const ids = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (ids.length === 0) throw new ConfigError(`--instance-ids: expected a comma-separated list of instance ids, got '${value}'`);
  return ids;
}

function tests(r: InstanceReport, key: 'FAIL_TO_PASS' | 'PASS_TO_PASS'): string {
  const l = r.tests_status?.[key];
  return l === undefined ? '' : `${l.success.length}/${l.success.length + l.failure.length}`;
}

/** Runs the benchmark as the options say and prints (and writes) the report. */
export async function runSweBench(opts: SweBenchOpts): Promise<void> {
  if (opts.instances === undefined) throw new ConfigError('--benchmark swe-bench needs --instances FILE (SWE-bench instances, JSON lines or a JSON array)');
  if ((opts.predictions === undefined) === (opts.agent === undefined)) throw new ConfigError('--benchmark swe-bench needs exactly one of --predictions FILE (patches made elsewhere) and --agent SPEC (a gymflow agent makes them)');
  if (opts.savePredictions !== undefined && opts.agent === undefined) throw new ConfigError('--save-predictions is for --agent runs (the predictions of --predictions are already in a file)');
  if (opts.sandbox !== undefined) {
    try {
      resolveConfig(opts.sandbox as Partial<SandboxConfig>); // before any image is built
    } catch (err) {
      throw new ConfigError(`--sandbox: ${(err as Error).message}`);
    }
  }
  const force = opts.force === true;
  for (const f of [opts.out, opts.savePredictions]) if (f !== undefined) await checkNewOutput(f, { force });
  if (opts.logDir !== undefined) await checkNewOutput(opts.logDir, { force, directory: true });
  const instances = selectInstances(loadInstances(opts.instances), opts.instanceIds, '--instance-ids', opts.instances);
  const specs = opts.specs === undefined ? undefined : loadSpecs(opts.specs);
  const repoUrl = opts.repoUrl;
  const source = { repos: opts.repos, ...defined({ repoUrl: repoUrl === 'none' ? (false as const) : repoUrl }), baseImage: opts.baseImage };
  const progress = (line: string): void => {
    if (!opts.json) process.stderr.write(`${line}\n`);
  };

  let predictions: Prediction[];
  let episodes: Map<string, AgentEpisode> | undefined;
  if (opts.agent !== undefined) {
    registerBuiltinEnvs();
    const kwargs: Record<string, unknown> = {
      instances: opts.instances,
      ...defined({ repos: opts.repos, repoUrl: source.repoUrl, specs: opts.specs, baseImage: opts.baseImage, sandbox: opts.sandbox }),
      testTimeoutS: opts.timeout,
    };
    const eps = await agentPredictions({
      kwargs,
      instanceIds: instances.map((i) => i.instanceId),
      agent: opts.agent,
      resolveAgent,
      concurrency: opts.concurrency,
      seed: opts.seed,
      onEpisode: (e) => progress(`episode ${e.prediction.instance_id}: ${e.reason} after ${e.steps} steps${e.resolvedInEpisode === undefined ? '' : e.resolvedInEpisode ? ' (resolved in the episode)' : ' (not resolved in the episode)'}`),
    });
    predictions = eps.map((e) => e.prediction);
    episodes = new Map(eps.map((e) => [e.prediction.instance_id, e]));
    if (opts.savePredictions) await writeFileAtomically(opts.savePredictions, predictions.map((p) => JSON.stringify(p)).join('\n') + '\n', { replace: force });
  } else {
    predictions = loadPredictions(opts.predictions as string);
    if (opts.instanceIds) predictions = predictions.filter((p) => opts.instanceIds?.includes(p.instance_id));
  }

  const { report, graded } = await gradePredictions({
    instances,
    predictions,
    specs,
    ...source,
    timeoutS: opts.timeout,
    ...defined({ sandbox: opts.sandbox as Partial<SandboxConfig> | undefined }),
    concurrency: opts.concurrency,
    onGraded: (g) => progress(`graded ${g.instanceId}: ${g.outcome}${g.error ? ` (${g.error})` : ''}`),
  });
  const model = predictions[0]?.model_name_or_path ?? opts.agent ?? 'unknown';
  if (opts.logDir !== undefined) await writeLogs(opts.logDir, model, predictions, graded);
  if (opts.out !== undefined) await writeFileAtomically(opts.out, `${JSON.stringify(report, null, 4)}\n`, { replace: force });
  if (opts.json) return printJson(report);
  const rows = graded.map((g) => {
    const ep = episodes?.get(g.instanceId);
    return {
      instance: g.instanceId,
      outcome: g.outcome.replace('_', ' '),
      f2p: tests(g.report, 'FAIL_TO_PASS'),
      p2p: tests(g.report, 'PASS_TO_PASS'),
      ...(ep ? { episode: `${ep.reason}, ${ep.steps} steps` } : {}),
      image: g.outcome === 'empty_patch' ? '' : `${(g.imageMs / 1000).toFixed(1)}s${g.imageBuilt ? ' built' : ''}`,
      grade: g.outcome === 'empty_patch' ? '' : `${(g.gradeMs / 1000).toFixed(1)}s`,
      note: g.error ?? '',
    };
  });
  console.log(
    formatTable(rows, [
      { key: 'instance' },
      { key: 'outcome' },
      { key: 'f2p', header: 'FAIL_TO_PASS', align: 'right' },
      { key: 'p2p', header: 'PASS_TO_PASS', align: 'right' },
      ...(episodes ? [{ key: 'episode' }] : []),
      { key: 'image', align: 'right' as const },
      { key: 'grade', align: 'right' as const },
      { key: 'note' },
    ]),
  );
  console.log(
    `swe-bench (${model}): ${report.total_instances} instances, ${report.submitted_instances} submitted, ${report.completed_instances} completed: ` +
      `${report.resolved_instances} resolved, ${report.unresolved_instances} unresolved, ${report.empty_patch_instances} empty patches, ${report.error_instances} errors`,
  );
  if (opts.out !== undefined) console.log(`report written to ${opts.out}`);
  if (opts.logDir !== undefined) console.log(`instance logs written to ${opts.logDir}`);
  if (opts.savePredictions !== undefined) console.log(`predictions written to ${opts.savePredictions}`);
}

/** The harness's per-instance files: `<dir>/<model>/<instance>/{patch.diff, report.json, test_output.txt}`. */
async function writeLogs(dir: string, model: string, predictions: readonly Prediction[], graded: readonly GradedInstance[]): Promise<void> {
  const patches = new Map(predictions.map((p) => [p.instance_id, p.model_patch]));
  for (const g of graded) {
    const d = join(dir, model.replaceAll('/', '__'), g.instanceId);
    await mkdir(d, { recursive: true });
    await writeFile(join(d, 'patch.diff'), patches.get(g.instanceId) ?? '');
    await writeFile(join(d, 'report.json'), `${JSON.stringify({ [g.instanceId]: g.report }, null, 4)}\n`);
    await writeFile(join(d, 'test_output.txt'), g.error ? `${g.error}\n${g.log}` : g.log);
  }
}
