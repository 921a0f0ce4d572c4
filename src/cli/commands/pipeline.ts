import { Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type WorkflowExecutionDescription, type WorkflowExecutionInfo, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { ConfigError, GymflowError } from '../../core/errors.js';
import { shortRef } from '../../hub/store/layout.js';
import type { PipelineConfig } from '../../loop/config.js';
import { loadPipelineConfig } from '../../runtime/config-file.js';
import { defaultWorkflowId } from '../../loop/plan.js';
import { SearchAttributeKeys } from '../../loop/search-attributes.js';
import { continuation, parseRunInput, type ClosedRun } from '../../loop/continuation.js';
import { forkRun, type ForkSource } from '../../loop/fork.js';
import { pipelineSummary } from '../../loop/summaries.js';
import { clientConnectionOptions, temporalTarget } from '../../runtime/temporal-target.js';
import { formatMismatch, STAGES, type BenchmarkMetrics, type IterationMetrics, type LoopState, type PipelineStatus } from '../../loop/status.js';
import { cancelSignal, pauseSignal, pipelineStatusQuery, resumeSignal } from '../../../workflows/messages.js';
import { fullMessage } from '../errors.js';
import { ingestCommand } from './pipeline-ingest.js';
import { printJson } from '../options.js';
import { formatNumber, formatTable } from '../table.js';
import { defined } from '../../core/defined.js';

/** The workflows `gymflow pipeline start` can start (see workflows/index.ts). */
export const PIPELINE_WORKFLOWS = ['trainingLoop', 'pipeline'] as const;
/** One of {@link PIPELINE_WORKFLOWS}. */
export type PipelineWorkflowType = (typeof PIPELINE_WORKFLOWS)[number];

/** Connection options shared by every `gymflow pipeline` sub-command. */
export interface ConnectOptions {
  address?: string;
  namespace?: string;
}

/** The Temporal frontend: `--address`, else `$TEMPORAL_ADDRESS`, else `127.0.0.1:7233`. */
export function resolveAddress(opts: ConnectOptions, env: NodeJS.ProcessEnv = process.env): string {
  return opts.address ?? (env['TEMPORAL_ADDRESS'] || '127.0.0.1:7233');
}

/** The namespace: `--namespace`, else `$TEMPORAL_NAMESPACE`, else `default`. */
export function resolveNamespace(opts: ConnectOptions, env: NodeJS.ProcessEnv = process.env): string {
  return opts.namespace ?? (env['TEMPORAL_NAMESPACE'] || 'default');
}

/** A Temporal server that could not be reached; names the address and how to start one. */
export class TemporalUnreachableError extends GymflowError {
  constructor(address: string, cause: unknown) {
    super('TEMPORAL_UNREACHABLE', `cannot reach Temporal at ${address}: ${(cause as Error).message ?? String(cause)} (start one with \`gymflow dev\`, or pass --address / set TEMPORAL_ADDRESS)`, { cause });
  }
}

/** Connects to the frontend and runs `fn` with a client; closes the connection afterwards. */
export async function withClient<T>(opts: ConnectOptions, fn: (client: Client, where: { address: string; namespace: string }) => Promise<T>): Promise<T> {
  // TLS and an API key (Temporal Cloud, a cluster with mTLS) come from the environment, as the `temporal` CLI reads them.
  const target = temporalTarget({ address: resolveAddress(opts), namespace: resolveNamespace(opts) });
  const { address, namespace } = target;
  let connection: Connection;
  try {
    connection = await Connection.connect(clientConnectionOptions(target));
  } catch (err) {
    throw new TemporalUnreachableError(address, err);
  }
  try {
    return await fn(new Client({ connection, namespace }), { address, namespace });
  } finally {
    await connection.close();
  }
}

/**
 * Turns "workflow not found" into an error that names the id, namespace and address — or, when the run
 * exists but has closed (signals to a closed run fail the same way), says that it has.
 */
export async function orNotFound<T>(client: Client, id: string, where: { address: string; namespace: string }, fn: () => Promise<T>, action?: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    const closed = await client.workflow
      .getHandle(id)
      .describe()
      .catch(() => undefined);
    if (closed && action !== undefined) throw new ConfigError(`workflow '${id}' is already ${closed.status.name}: nothing to ${action}`);
    throw new ConfigError(`no workflow '${id}' in namespace ${where.namespace} at ${where.address} (see \`gymflow pipeline list\`)`);
  }
}

/**
 * Starts a run of `config`: `trainingLoop` (default) or one `pipeline` pass on the config's CPU task queue,
 * with the experiment and environment search attributes set from the start (so `pipeline list` finds it at
 * once). Returns the workflow and first run id.
 */
export async function startPipeline(
  client: Client,
  config: PipelineConfig,
  options: { workflowId?: string; workflow?: PipelineWorkflowType; state?: LoopState } = {},
): Promise<{ workflowId: string; runId: string; handle: WorkflowHandle }> {
  const workflowId = options.workflowId ?? defaultWorkflowId(config.name, new Date());
  const firstAlgorithm = config.phases[0]?.train.command;
  try {
    const handle = await client.workflow.start(options.workflow ?? 'trainingLoop', {
      taskQueue: config.task_queues.cpu,
      workflowId,
      args: options.state === undefined ? [config] : [config, options.state],
      // What the Web UI's list and the run's page show beside the id (src/loop/summaries.ts).
      staticSummary: pipelineSummary(options.workflow ?? 'trainingLoop', config, options.state?.forkedFrom),
      typedSearchAttributes: [
        { key: SearchAttributeKeys.experiment, value: config.name },
        { key: SearchAttributeKeys.env, value: config.env },
        ...(firstAlgorithm === undefined ? [] : [{ key: SearchAttributeKeys.algorithm, value: firstAlgorithm }]),
      ],
    });
    return { workflowId, runId: handle.firstExecutionRunId, handle };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new ConfigError(`a run with workflow id '${workflowId}' is already running: choose another --id, or follow it with \`gymflow pipeline status ${workflowId}\``);
    }
    const message = fullMessage(err);
    if (/search attribute/i.test(message)) {
      throw new ConfigError(
        `${message}: gymflow's search attributes are not registered on this namespace; \`gymflow dev\` registers them, on a cluster run \`temporal operator search-attribute create\` (docs/operations.md)`,
      );
    }
    throw err;
  }
}

/**
 * The latest execution of workflow `workflowId` as {@link continuation} needs it: type, status, the arguments it
 * started with (from its history's first event) and, when it completed, its result.
 */
export async function closedRun(client: Client, workflowId: string, where: { address: string; namespace: string }): Promise<ClosedRun> {
  const handle = client.workflow.getHandle(workflowId);
  const described = await orNotFound(client, workflowId, where, () => handle.describe());
  const history = await handle.fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const { config, state } = parseRunInput(payloads.map((p) => defaultPayloadConverter.fromPayload(p)), workflowId);
  const status = described.status.name;
  const result = status === 'COMPLETED' && described.type === 'trainingLoop' ? ((await handle.result()) as ClosedRun['result']) : undefined;
  return { workflowId, type: described.type, status, startTime: described.startTime, config, state, result };
}

/**
 * What {@link forkRun} reads of workflow `workflowId`: its type, the configuration of its latest execution, and
 * every iteration it knows — the `pipeline_status` history (a running or closed run, when a worker answers), a
 * completed run's result, and the latest execution's starting state, merged by iteration.
 */
export async function forkSource(client: Client, workflowId: string, where: { address: string; namespace: string }): Promise<ForkSource> {
  const handle = client.workflow.getHandle(workflowId);
  const described = await orNotFound(client, workflowId, where, () => handle.describe());
  if (described.type !== 'trainingLoop') throw new ConfigError(`workflow '${workflowId}' is a ${described.type} run: only a trainingLoop forks`);
  const history = await handle.fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const { config, state } = parseRunInput(payloads.map((p) => defaultPayloadConverter.fromPayload(p)), workflowId);
  const byIteration = new Map<number, IterationMetrics>();
  for (const h of state?.history ?? []) byIteration.set(h.iteration, h);
  if (described.status.name === 'COMPLETED') for (const h of ((await handle.result()) as ClosedRun['result'])?.history ?? []) byIteration.set(h.iteration, h);
  const answer = await askStatus(client, workflowId, 15_000, described.taskQueue);
  for (const h of answer.status?.history ?? []) byIteration.set(h.iteration, h);
  return { workflowId, type: described.type, config, history: [...byIteration.values()].sort((x, y) => x.iteration - y.iteration) };
}

/** A run as `pipeline status` shows it: the execution, and its `pipeline_status` answer or why there is none. */
export async function describeRun(client: Client, id: string, where: { address: string; namespace: string }): Promise<{ described: WorkflowExecutionDescription; status: PipelineStatus | undefined; problem: string | undefined }> {
  const described = await orNotFound(client, id, where, () => client.workflow.getHandle(id).describe());
  const { status, problem } = await orNotFound(client, id, where, () => askStatus(client, id, 15_000, described.taskQueue));
  return { described, status, problem };
}

/**
 * Sends `pause` or `resume` to a run. A signal that changes nothing is still sent (the run may change meanwhile);
 * `changed` says whether it did, when the run answered `pipeline_status` before.
 */
export async function signalPipeline(client: Client, id: string, where: { address: string; namespace: string }, name: 'pause' | 'resume'): Promise<{ workflowId: string; signal: 'pause' | 'resume'; changed?: boolean }> {
  const before = (await orNotFound(client, id, where, () => askStatus(client, id, 5000))).status;
  await orNotFound(client, id, where, () => client.workflow.getHandle(id).signal(name === 'pause' ? pauseSignal : resumeSignal), name);
  const unchanged = before === undefined ? undefined : name === 'pause' ? before.paused : !before.paused;
  return { workflowId: id, signal: name, ...defined({ changed: unchanged === undefined ? undefined : !unchanged }) };
}

/**
 * Sends `cancel` to a run (`finish`: the running activity completes first; `abort`: it is cancelled), and with
 * `wait` waits until the run has stopped. `note` says when an earlier cancel makes this one change nothing.
 */
export async function cancelPipeline(
  client: Client,
  id: string,
  where: { address: string; namespace: string },
  request: { mode: 'finish' | 'abort'; reason?: string },
  wait: boolean,
): Promise<{ workflowId: string; signal: 'cancel'; mode: 'finish' | 'abort'; reason?: string; status?: string; note?: string }> {
  const handle = client.workflow.getHandle(id);
  const earlier = (await orNotFound(client, id, where, () => askStatus(client, id, 5000))).status?.cancel;
  await orNotFound(client, id, where, () => handle.signal(cancelSignal, request), 'cancel');
  // Only a graceful cancel followed by an abort changes anything once a cancel was requested.
  const note =
    earlier === undefined ? undefined : earlier.mode === 'finish' && request.mode === 'abort' ? 'it turns the earlier graceful cancel into an abort' : `a ${earlier.mode} cancel was already requested at ${earlier.requestedAt}, so nothing changes`;
  let final: string | undefined;
  if (wait) {
    await handle.result().catch(() => undefined);
    final = (await handle.describe()).status.name;
  }
  return { workflowId: id, signal: 'cancel', ...request, ...defined({ status: final, note }) };
}

/** gRPC's status code of a call that ran out of time (`@grpc/grpc-js` `status.DEADLINE_EXCEEDED`). */
const GRPC_DEADLINE_EXCEEDED = 4;

/**
 * How long a status query may go unanswered before {@link askStatus} checks that the server is up at all, and how
 * long that check may take: a query to a server that is down does not fail, the client's gRPC retries keep it
 * waiting until its deadline, which would then read as "no worker answered". A query to a live server is answered
 * well before 250 ms (the soak's p50 is ~20 ms), so the check rarely costs a second call; one during an outage fails
 * within about 1.25 s this way (docs/operations.md "Soak"), instead of after the whole timeout.
 */
export const STATUS_REACHABILITY_CHECK = { afterMs: 250, timeoutMs: 1000 } as const;

/** A run's answer to `pipeline_status`, or why there is none. */
export type StatusAnswer = { status: PipelineStatus; problem?: undefined } | { status?: undefined; problem: string };

/**
 * Resolves with why the server of `client` is not answering, once {@link STATUS_REACHABILITY_CHECK} says so; never
 * resolves while it answers (nor after `stop` aborts).
 */
async function serverDown(client: Client, stop: AbortSignal): Promise<string> {
  const never = new Promise<never>(() => undefined);
  const connection = client.connection;
  if (!(connection instanceof Connection)) return never;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, STATUS_REACHABILITY_CHECK.afterMs);
    // Cleared when the answer came first, so a finished command does not wait for the timer.
    stop.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });
  if (stop.aborted) return never;
  const { timeoutMs } = STATUS_REACHABILITY_CHECK;
  // The client's retries of an unanswered call back off on their own clock, past the call's deadline: the check's
  // answer is bounded by a timer instead, so a query during an outage fails within afterMs + timeoutMs.
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    const check = connection.withDeadline(Date.now() + timeoutMs, () => connection.withAbortSignal(stop, () => connection.healthService.check({})));
    check.catch(() => undefined); // answered after the timer, or aborted with the query: nobody waits for it then
    if ((await Promise.race([check.then(() => 'up' as const), timedOut])) === 'timeout' && !stop.aborted) {
      return `the Temporal server at ${connection.options.address} is not answering (no answer to a health check within ${timeoutMs / 1000} s)`;
    }
  } catch (err) {
    if (!stop.aborted) return `the Temporal server at ${connection.options.address} is not answering (${fullMessage(err)})`;
  } finally {
    clearTimeout(timer);
  }
  return never;
}

/**
 * Asks a run for its `pipeline_status`. A query needs a worker to answer (for a closed run too: it replays
 * the history), so this gives up after `timeoutMs` instead of hanging, and says so; when the server itself does not
 * answer it says that within about {@link STATUS_REACHABILITY_CHECK}'s 1.25 s; any other failure (a workflow task
 * that keeps failing, a query the workflow does not know) is passed on as it is.
 *
 * @param taskQueue The run's task queue, named in the no-worker message.
 */
export async function askStatus(client: Client, workflowId: string, timeoutMs = 15_000, taskQueue?: string): Promise<StatusAnswer> {
  const handle = client.workflow.getHandle(workflowId);
  const stop = new AbortController();
  const deadline = Date.now() + timeoutMs;
  try {
    const answer = await Promise.race([
      client.connection.withDeadline(deadline, () => client.connection.withAbortSignal(stop.signal, () => handle.query(pipelineStatusQuery))).then((status) => ({ status })),
      serverDown(client, stop.signal).then((problem) => ({ problem })),
    ]);
    return answer;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw err;
    // Past the deadline the call ends as DEADLINE_EXCEEDED, or on a busy machine sometimes as CANCELLED ("Call
    // cancelled"): either way nothing answered in time.
    if ((err as { cause?: { code?: unknown } }).cause?.code === GRPC_DEADLINE_EXCEEDED || (!stop.signal.aborted && Date.now() >= deadline)) {
      return { problem: `no worker answered the pipeline_status query within ${timeoutMs / 1000} s: is a worker polling task queue ${taskQueue ?? 'gymflow'}?` };
    }
    return { problem: `the pipeline_status query failed: ${fullMessage(err)}` };
  } finally {
    // Ends whichever of the two is still waiting (the query when the server is down, the check when it answered).
    stop.abort();
  }
}

/** {@link askStatus}'s status, `undefined` when there is none. */
export async function queryStatus(client: Client, workflowId: string, timeoutMs = 15_000): Promise<PipelineStatus | undefined> {
  return (await askStatus(client, workflowId, timeoutMs)).status;
}

function pct(v: number | undefined): string {
  return v === undefined ? '' : v.toFixed(3);
}

function duration(ms: number | undefined): string {
  if (ms === undefined) return '';
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function short(ref: string | undefined): string {
  return ref === undefined ? '' : ref.replace(/^sha256:/, '').slice(0, 12);
}

/**
 * The policy (ONNX) and checkpoint refs of the best iteration, as its history entry recorded them; `{}` when
 * the compacted history no longer holds it. `gymflow store checkout REF DIR` writes either out.
 */
export function bestRefs(best: { iteration: number }, history: readonly IterationMetrics[]): IterationMetrics['refs'] {
  return history.find((h) => h.iteration === best.iteration)?.refs ?? {};
}

/** States after which a run does nothing more. */
const ENDED: ReadonlySet<PipelineStatus['state']> = new Set(['cancelled', 'completed', 'failed']);

/**
 * The readable form of a `pipeline_status` answer: a header (state, stage, iteration, progress, best, what
 * retention pruned), one row per stage of the current pass, then the metrics history (one row per finished
 * iteration), then the last error.
 */
export function formatStatus(status: PipelineStatus, info?: Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'status'>): string {
  const lines: string[] = [];
  const progress = status.progress ? `${status.progress.done}/${status.progress.total} ${status.progress.unit}` : '';
  if (info) lines.push(`workflow    ${info.workflowId} (${status.workflow}, run ${status.run}, ${info.status.name})`);
  lines.push(`experiment  ${status.experiment}   env ${status.env}`);
  lines.push(
    // `paused` outlives the run's end (it is carried, not cleared): after it, only the end state matters.
    `state       ${status.state}${status.paused && status.state !== 'paused' && !ENDED.has(status.state) ? ' (paused)' : ''}   stage ${status.stage}${progress ? ` ${progress}` : ''}   iteration ${status.iteration}/${status.maxIterations}` +
      `${status.phase ? `   phase ${status.phase}` : ''}${status.algorithm ? `   algorithm ${status.algorithm}` : ''}`,
  );
  if (status.forkedFrom) lines.push(`forked      from iteration ${status.forkedFrom.iteration} of ${status.forkedFrom.workflowId}`);
  if (status.best) {
    const refs = bestRefs(status.best, status.history);
    const made = (['policy', 'checkpoint'] as const).flatMap((k) => (refs[k] === undefined ? [] : [`${k} ${shortRef(refs[k])}`]));
    lines.push(`best        success ${pct(status.best.success)} at iteration ${status.best.iteration}${made.length ? `   ${made.join('   ')}` : ''}`);
  }
  if (status.retention) {
    const { pruned, error } = status.retention;
    lines.push(`retention   ${error === undefined ? `pruned ${pruned.length} model artifact${pruned.length === 1 ? '' : 's'} after this iteration` : `could not prune: ${error}`}`);
  }
  if (status.stopReason) lines.push(`stopped     ${status.stopReason}`);
  if (status.cancel) lines.push(`cancel      ${status.cancel.mode} requested ${status.cancel.requestedAt}${status.cancel.activity ? `, running activity ${status.cancel.activity}` : ''}${status.cancel.reason ? ` (${status.cancel.reason})` : ''}`);
  lines.push('');
  const stageRows = STAGES.map((name) => {
    const s = status.stages[name];
    return {
      stage: name as string,
      state: s.state,
      progress: s.progress ? `${s.progress.done}/${s.progress.total} ${s.progress.unit}` : '',
      time: duration(s.durationMs),
      ref: short(s.ref),
      note: s.note ?? '',
    };
  });
  // Asynchronous RL: the next iteration's collection, running beside this pass's training.
  const next = status.next;
  if (next !== undefined) {
    for (const name of ['tasks', 'collect'] as const) {
      const s = next.stages[name];
      stageRows.push({
        stage: `${name} (iter ${next.iteration})`,
        state: s.state,
        progress: s.progress ? `${s.progress.done}/${s.progress.total} ${s.progress.unit}` : '',
        time: duration(s.durationMs),
        ref: short(s.ref),
        note: name === 'collect' ? [`policy version ${next.policyVersion}`, s.note, next.error].filter((x) => x !== undefined && x !== '').join('; ') : (s.note ?? ''),
      });
    }
  }
  lines.push(formatTable(stageRows, [{ key: 'stage' }, { key: 'state' }, { key: 'progress', align: 'right' }, { key: 'time', align: 'right' }, { key: 'ref' }, { key: 'note' }]));
  if (status.history.length > 0) {
    lines.push('');
    // pass^k only when some evaluation ran trials (`eval.repeats` above 1): the largest k's value.
    const passKOf = (h: IterationMetrics): string => {
      const last = h.passK?.[h.passK.length - 1];
      return last === undefined || last.k < 2 ? '' : `${pct(last.value)} (k=${last.k})`;
    };
    const withPassK = status.history.some((h) => passKOf(h) !== '');
    // The calibration error only for an environment that reads stated confidences; one column per benchmark.
    const withCalibration = status.history.some((h) => h.calibrationError !== undefined);
    const benchmarks = [...new Set(status.history.flatMap((h) => Object.keys(h.benchmarks ?? {})))];
    const benchmarkCell = (b: BenchmarkMetrics | undefined): string => {
      if (b === undefined) return '';
      if (b.success === undefined) return 'failed';
      return `${pct(b.success.value)} [${pct(b.success.low)}, ${pct(b.success.high)}]${b.calibrationError === undefined ? '' : ` cal ${pct(b.calibrationError)}`}`;
    };
    const historyRows = status.history.map((h) => ({
      iter: h.iteration,
      phase: h.phase,
      algorithm: h.algorithm,
      success: h.success ? `${pct(h.success.value)} [${pct(h.success.low)}, ${pct(h.success.high)}] n=${h.success.n}` : '',
      passK: passKOf(h),
      calibration: h.calibrationError === undefined ? '' : pct(h.calibrationError),
      ...Object.fromEntries(benchmarks.map((name) => [`benchmark:${name}`, benchmarkCell(h.benchmarks?.[name])])),
      reward: h.evalReward ?? '',
      steps: h.evalSteps ?? '',
      rollouts: h.rollouts ? `${h.rollouts.episodes} ep, ${pct(h.rollouts.success)} ok` : '',
      loss: h.train?.loss === undefined || h.train.loss === null ? '' : formatNumber(h.train.loss),
      entropy: h.train?.entropy === undefined ? '' : formatNumber(h.train.entropy),
      mismatch: h.train?.mismatchKl === undefined ? '' : formatMismatch(h.train.mismatchKl),
      trainSteps: h.train?.steps ?? '',
      time: duration(h.wallMs),
    }));
    lines.push(
      formatTable(historyRows, [
        { key: 'iter', align: 'right' },
        { key: 'phase' },
        { key: 'algorithm' },
        { key: 'success', header: 'held-out success [95% CI]' },
        ...(withPassK ? [{ key: 'passK' as const, header: 'pass^k', align: 'right' as const }] : []),
        ...(withCalibration ? [{ key: 'calibration', header: 'calibration error', align: 'right' as const }] : []),
        ...benchmarks.map((name) => ({ key: `benchmark:${name}`, header: `${name} [95% CI]` })),
        { key: 'reward', align: 'right' },
        { key: 'steps', align: 'right' },
        { key: 'rollouts' },
        { key: 'loss', align: 'right' },
        { key: 'entropy', align: 'right' },
        { key: 'mismatch', align: 'right' },
        { key: 'trainSteps', header: 'train steps', align: 'right' },
        { key: 'time', align: 'right' },
      ]),
    );
  }
  if (status.lastError) {
    lines.push('');
    lines.push(`last error  [${status.lastError.stage}] ${status.lastError.type ? `${status.lastError.type}: ` : ''}${status.lastError.message} (${status.lastError.at})`);
  }
  return lines.join('\n');
}

/** The visibility query of `pipeline list`. */
export function listQuery(opts: { experiment?: string; env?: string; status?: string; query?: string }): string {
  const quote = (v: string): string => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  const parts = [`WorkflowType IN (${PIPELINE_WORKFLOWS.map(quote).join(', ')})`];
  if (opts.experiment !== undefined) parts.push(`GymflowExperiment = ${quote(opts.experiment)}`);
  if (opts.env !== undefined) parts.push(`GymflowEnv = ${quote(opts.env)}`);
  if (opts.status !== undefined) parts.push(`ExecutionStatus = ${quote(opts.status)}`);
  if (opts.query !== undefined) parts.push(`(${opts.query})`);
  return parts.join(' AND ');
}

/** One row of `pipeline list`. */
export interface PipelineListRow {
  workflowId: string;
  runId: string;
  type: string;
  status: string;
  experiment: string | null;
  env: string | null;
  algorithm: string | null;
  iteration: number | null;
  bestSuccess: number | null;
  startTime: string;
  closeTime: string | null;
}

function listRow(w: WorkflowExecutionInfo): PipelineListRow {
  const sa = w.typedSearchAttributes;
  return {
    workflowId: w.workflowId,
    runId: w.runId,
    type: w.type,
    status: w.status.name,
    experiment: sa.get(SearchAttributeKeys.experiment) ?? null,
    env: sa.get(SearchAttributeKeys.env) ?? null,
    algorithm: sa.get(SearchAttributeKeys.algorithm) ?? null,
    iteration: sa.get(SearchAttributeKeys.iteration) ?? null,
    bestSuccess: sa.get(SearchAttributeKeys.bestSuccess) ?? null,
    startTime: w.startTime.toISOString(),
    closeTime: w.closeTime?.toISOString() ?? null,
  };
}

/** Runs matching the filters, newest first (from the visibility API; at most `limit`). */
export async function listPipelines(client: Client, query: string, limit: number): Promise<PipelineListRow[]> {
  const rows: PipelineListRow[] = [];
  for await (const w of client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
    rows.push(listRow(w));
    if (rows.length >= limit) break;
  }
  return rows;
}

function parseWorkflowType(value: string): PipelineWorkflowType {
  if (!(PIPELINE_WORKFLOWS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected ${PIPELINE_WORKFLOWS.join(' or ')}, got '${value}'`);
  return value as PipelineWorkflowType;
}

function parseWorkflowId(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('expected a workflow id, got an empty one');
  return value;
}

function parseIteration(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`expected an iteration number (0 or more), got '${value}'`);
  return n;
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError(`expected a positive integer, got '${value}'`);
  return n;
}

export function withConnect(cmd: Command): Command {
  return cmd
    .option('--address <host:port>', 'Temporal frontend (default: $TEMPORAL_ADDRESS, else 127.0.0.1:7233)')
    .option('--namespace <ns>', 'Temporal namespace (default: $TEMPORAL_NAMESPACE, else default)');
}

/**
 * Prints one line to stderr whenever the stage, iteration or state changes, until `done` resolves; and why,
 * when the run gives no status (no worker polling its task queue, a failing workflow task).
 */
async function followProgress(client: Client, workflowId: string, done: Promise<unknown>, taskQueue: string, everyMs = 2000): Promise<void> {
  let last = '';
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => undefined);
  while (!finished) {
    const answer: StatusAnswer = await askStatus(client, workflowId, 5000, taskQueue).catch((err: unknown) => ({ problem: fullMessage(err) }));
    const s = answer.status;
    const p = s?.progress ? ` ${s.progress.done}/${s.progress.total} ${s.progress.unit}` : '';
    const line = s ? `iteration ${s.iteration}/${s.maxIterations}  ${s.state}  ${s.stage}${p}` : `no status: ${answer.problem ?? ''}`;
    if (line !== last && !finished) process.stderr.write(`${new Date().toISOString().slice(11, 19)}  ${line}\n`);
    last = line;
    await Promise.race([done.catch(() => undefined), new Promise((r) => setTimeout(r, everyMs))]);
  }
}

/** gRPC's status of a call the server did not take: no connection (`UNAVAILABLE`), or none within its deadline. */
const GRPC_UNAVAILABLE = 14;

/** Whether `err` says that the server did not answer (rather than that the run failed or does not exist). */
export function serverUnreachable(err: unknown): boolean {
  const codes = [(err as { code?: unknown }).code, (err as { cause?: { code?: unknown } }).cause?.code];
  return codes.some((c) => c === GRPC_UNAVAILABLE || c === GRPC_DEADLINE_EXCEEDED);
}

/**
 * `handle.result()` that outlasts the server being down (a restart of `gymflow cluster`'s server, a dev server
 * started again on its database): the SDK gives up on a call the server does not take after its own retries, a few
 * seconds, while the run lives on in the server's database. So when the server does not answer, this waits until its
 * health check answers again (asking every `everyMs`) and asks for the result again. A run that failed, was
 * cancelled or terminated, or does not exist ends the wait as `handle.result()` does.
 */
export async function resultThroughOutages(client: Client, handle: WorkflowHandle, everyMs = 1000): Promise<unknown> {
  const connection = client.connection;
  for (;;) {
    try {
      return await handle.result();
    } catch (err) {
      if (!serverUnreachable(err) || !(connection instanceof Connection)) throw err;
    }
    for (;;) {
      const up = await connection
        .withDeadline(Date.now() + everyMs, () => connection.healthService.check({}))
        .then(
          () => true,
          () => false,
        );
      if (up) break;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}

/**
 * What `pipeline start` and `pipeline continue` print for a run they started; with `--wait`, its progress until it
 * ends, then its status (exit code 1 unless it completed).
 */
async function reportStarted(
  client: Client,
  where: { address: string; namespace: string },
  started: { workflowId: string; runId: string; handle: WorkflowHandle; workflow: PipelineWorkflowType; taskQueue: string },
  opts: ConnectOptions & { wait?: boolean; json?: boolean },
  extra: Record<string, unknown> = {},
): Promise<void> {
  const { workflowId, runId, handle } = started;
  if (!opts.wait) {
    if (opts.json) return printJson({ workflowId, runId, workflow: started.workflow, taskQueue: started.taskQueue, address: where.address, namespace: where.namespace, ...extra });
    console.log(`started ${started.workflow} ${workflowId} (run ${runId}) on task queue ${started.taskQueue} at ${where.address}`);
    console.log(`watch it: gymflow pipeline status ${workflowId}${opts.address ? ` --address ${where.address}` : ''}`);
    return;
  }
  if (!opts.json) process.stderr.write(`started ${started.workflow} ${workflowId} (run ${runId}); waiting for it to finish\n`);
  // The run lives on the server: a server that goes away for a while (restarted) does not end the wait.
  const result = resultThroughOutages(client, handle);
  if (!opts.json) await followProgress(client, workflowId, result, started.taskQueue);
  let failure: Error | undefined;
  try {
    await result;
  } catch (err) {
    failure = err as Error;
  }
  const status = await queryStatus(client, workflowId);
  const described = await handle.describe();
  if (opts.json) printJson({ workflowId, runId: described.runId, status: described.status.name, pipelineStatus: status ?? null, error: failure?.message ?? null, ...extra });
  else {
    if (status) console.log(formatStatus(status, described));
    else console.log(`${workflowId}: ${described.status.name} (no worker answered pipeline_status)`);
    if (failure) console.error(`gymflow: ${workflowId} did not complete: ${failure.message}${failure.cause instanceof Error ? `: ${failure.cause.message}` : ''}`);
  }
  if (failure) process.exitCode = 1;
}

/** `gymflow pipeline …`: start, watch and steer pipeline runs on a Temporal server. */
export function pipelineCommand(program: Command): void {
  const pipeline = program.command('pipeline').description('start, watch and steer training runs on Temporal (see docs/operations.md)');
  ingestCommand(pipeline);

  withConnect(pipeline.command('start'))
    .description('validate CONFIG locally, then start a trainingLoop (or one pipeline pass) for it')
    .argument('<config>', 'pipeline configuration (YAML or JSON)')
    .option('--id <workflow-id>', 'workflow id (default: <name>-<yyyymmdd-hhmmss>)', parseWorkflowId)
    .option('--workflow <type>', 'trainingLoop | pipeline (one pass)', parseWorkflowType, 'trainingLoop')
    .option('--wait', 'wait for the run to finish, printing progress; exit 1 unless it completed')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: ConnectOptions & { id?: string; workflow: PipelineWorkflowType; wait?: boolean; json?: boolean }) => {
      const config = await loadPipelineConfig(file);
      await withClient(opts, async (client, where) => {
        const started = await startPipeline(client, config, { workflow: opts.workflow, ...defined({ workflowId: opts.id }) });
        await reportStarted(client, where, { ...started, workflow: opts.workflow, taskQueue: config.task_queues.cpu }, opts);
      });
    });

  withConnect(pipeline.command('continue'))
    .description('continue a closed trainingLoop run where it stopped (the iteration it failed or was cancelled in, or the one after its last), optionally with an amended CONFIG')
    .argument('<workflow-id>', 'the run to continue')
    .argument('[config]', 'an amended configuration (same name, env and store); default: the run\'s own')
    .option('--max-iterations <n>', 'raise (or set) max_iterations', parseLimit)
    .option('--id <workflow-id>', 'workflow id of the continuation (default: the same id, as a new run of it)', parseWorkflowId)
    .option('--wait', 'wait for the run to finish, printing progress; exit 1 unless it completed')
    .option('--json', 'print JSON')
    .action(async (id: string, file: string | undefined, opts: ConnectOptions & { maxIterations?: number; id?: string; wait?: boolean; json?: boolean }) => {
      const amended = file === undefined ? {} : { amended: await loadPipelineConfig(file), amendedFile: file };
      await withClient(opts, async (client, where) => {
        const run = await closedRun(client, id, where);
        const next = continuation(run, { ...amended, ...defined({ maxIterations: opts.maxIterations }) });
        if (!opts.json) process.stderr.write(`continuing ${id} (${run.status}): ${next.summary}\n`);
        const started = await startPipeline(client, next.config, { workflowId: opts.id ?? id, ...defined({ state: next.state }) });
        await reportStarted(client, where, { ...started, workflow: 'trainingLoop', taskQueue: next.config.task_queues.cpu }, opts, { continued: { workflowId: id, status: run.status, iteration: next.iteration } });
      });
    });

  withConnect(pipeline.command('fork'))
    .description("start a new trainingLoop from iteration K of a run (its checkpoint, its history up to K), optionally with another CONFIG; when only the reward changed, the first iteration rescores iteration K's rollouts instead of collecting. The old run is untouched")
    .argument('<workflow-id>', 'the run to fork (running or closed)')
    .requiredOption('--from-iteration <k>', 'the iteration whose policy the fork starts from (the fork runs K+1 first)', parseIteration)
    .option('--config <file>', "the fork's configuration (same store); default: the run's own")
    .option('--name <name>', "the fork's experiment name (default: the configuration's when it differs from the run's, else <name>-fork<K>)")
    .option('--rescore', "score iteration K's rollouts again instead of collecting, even when the collection changed")
    .option('--no-rescore', 'collect afresh even when only the reward changed')
    .option('--max-iterations <n>', 'raise (or set) max_iterations', parseLimit)
    .option('--id <workflow-id>', 'workflow id of the fork (default: <name>-<yyyymmdd-hhmmss>)', parseWorkflowId)
    .option('--wait', 'wait for the fork to finish, printing progress; exit 1 unless it completed')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: ConnectOptions & { fromIteration: number; config?: string; name?: string; rescore?: boolean; maxIterations?: number; id?: string; wait?: boolean; json?: boolean }, cmd: Command) => {
      const amended = opts.config === undefined ? {} : { config: await loadPipelineConfig(opts.config), configFile: opts.config };
      // Commander gives `rescore: true` by default for a --no- option: only an explicit flag decides.
      const rescore = cmd.getOptionValueSource('rescore') === 'cli' ? opts.rescore : undefined;
      await withClient(opts, async (client, where) => {
        const source = await forkSource(client, id, where);
        const next = forkRun(source, { iteration: opts.fromIteration, now: new Date(), ...amended, ...defined({ name: opts.name, rescore, maxIterations: opts.maxIterations }) });
        if (!opts.json) process.stderr.write(`forking ${id} at iteration ${opts.fromIteration}: ${next.summary}\n`);
        const started = await startPipeline(client, next.config, { state: next.state, ...defined({ workflowId: opts.id }) });
        await reportStarted(client, where, { ...started, workflow: 'trainingLoop', taskQueue: next.config.task_queues.cpu }, opts, {
          forkedFrom: { workflowId: id, iteration: opts.fromIteration },
          experiment: next.config.name,
          rescore: next.rescore,
          ...defined({ reusedRollouts: next.state.reuseRollouts?.ref }),
        });
      });
    });

  withConnect(pipeline.command('status'))
    .description("print a run's pipeline_status: stage, iteration, per-stage progress, metrics history")
    .argument('<workflow-id>', 'workflow id')
    .option('--json', 'print the raw pipeline_status as JSON')
    .action(async (id: string, opts: ConnectOptions & { json?: boolean }) => {
      await withClient(opts, async (client, where) => {
        const { described, status, problem } = await describeRun(client, id, where);
        if (opts.json) return printJson({ workflowId: id, runId: described.runId, status: described.status.name, pipelineStatus: status ?? null, ...defined({ problem }) });
        if (status) console.log(formatStatus(status, described));
        else {
          console.log(`${id}: ${described.status.name} (${described.type}, started ${described.startTime.toISOString()})`);
          console.log(problem);
          process.exitCode = 1;
        }
      });
    });

  for (const [name, what] of [
    ['pause', 'pause a run before its next stage (the running activity finishes)'],
    ['resume', 'resume a paused run'],
  ] as const) {
    withConnect(pipeline.command(name))
      .description(what)
      .argument('<workflow-id>', 'workflow id')
      .option('--json', 'print JSON')
      .action(async (id: string, opts: ConnectOptions & { json?: boolean }) => {
        await withClient(opts, async (client, where) => {
          const sent = await signalPipeline(client, id, where, name);
          if (opts.json) printJson(sent);
          else console.log(`sent ${name} to ${id}${sent.changed === false ? `; it was ${name === 'pause' ? 'already paused' : 'not paused'}, so nothing changes` : ''}`);
        });
      });
  }

  withConnect(pipeline.command('cancel'))
    .description('stop a run gracefully: by default the running activity finishes first; --abort cancels it (the trainer is killed)')
    .argument('<workflow-id>', 'workflow id')
    .option('--abort', 'cancel the running activity instead of letting it finish')
    .option('--reason <text>', 'why (kept in the status)')
    .option('--wait', 'wait until the run has stopped')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: ConnectOptions & { abort?: boolean; reason?: string; wait?: boolean; json?: boolean }) => {
      await withClient(opts, async (client, where) => {
        const request = { mode: opts.abort ? ('abort' as const) : ('finish' as const), ...defined({ reason: opts.reason }) };
        const { note, ...sent } = await cancelPipeline(client, id, where, request, opts.wait === true);
        if (opts.json) printJson(sent);
        else console.log(`sent cancel (${request.mode}) to ${id}${note === undefined ? '' : `; ${note}`}${sent.status === undefined ? '' : `; it is now ${sent.status}`}`);
      });
    });

  withConnect(pipeline.command('list'))
    .description('list runs (newest first) from the visibility API, filtered by the gymflow search attributes')
    .option('--experiment <name>', 'only this experiment (GymflowExperiment)')
    .option('--env <id>', 'only this environment (GymflowEnv)')
    .option('--status <s>', 'Running | Completed | Failed | Canceled | Terminated | ContinuedAsNew | TimedOut')
    .option('--query <q>', 'an extra visibility query, ANDed with the rest')
    .option('--limit <n>', 'at most this many runs', parseLimit, 50)
    .option('--json', 'print JSON')
    .action(async (opts: ConnectOptions & { experiment?: string; env?: string; status?: string; query?: string; limit: number; json?: boolean }) => {
      await withClient(opts, async (client) => {
        const rows = await listPipelines(client, listQuery(opts), opts.limit);
        if (opts.json) return printJson(rows);
        if (rows.length === 0) return console.log('no runs');
        console.log(
          formatTable(
            rows.map((r) => ({ ...r, bestSuccess: r.bestSuccess ?? '', iteration: r.iteration ?? '', startTime: r.startTime.replace(/\.\d+Z$/, 'Z') })),
            [
              { key: 'workflowId', header: 'workflow id' },
              { key: 'type' },
              { key: 'status' },
              { key: 'experiment' },
              { key: 'env' },
              { key: 'algorithm' },
              { key: 'iteration', align: 'right' },
              { key: 'bestSuccess', header: 'best success', align: 'right' },
              { key: 'startTime', header: 'started' },
            ],
          ),
        );
      });
    });
}
