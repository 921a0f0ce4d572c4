/**
 * The soak's service-level objective (docs/operations.md "Soak"), checked on a chaos run against the undisturbed
 * run of the same configuration and seed, and the report's tables.
 */
import { readFile } from 'node:fs/promises';
import { eventCounts } from './chaos.js';
import { percentile } from './prober.js';
import type { RunResult } from './run.js';

/** One check of the SLO. */
export interface SloCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/** Thresholds of the SLO. */
export interface SloLimits {
  iterations: number;
  /** p99 of `pipeline_status` while everything is up. */
  statusP99Ms: number;
  /** The slowest a query may take to fail while the server is down. */
  outageFailMs: number;
  /** Events per workflow execution. */
  historyEvents: number;
  /** Chaos events that must have happened. */
  minChaosEvents: number;
  /** Without a baseline run: the undisturbed optimiser steps of every iteration (a `max_steps` configuration). */
  expectedSteps?: number;
}

/** The issue's limits. */
export const DEFAULT_LIMITS: Omit<SloLimits, 'iterations' | 'minChaosEvents'> = { statusP99Ms: 100, outageFailMs: 2_000, historyEvents: 10_000 };

/** Figures the report shows besides the checks. */
export interface SloFigures {
  statusQueries: number;
  statusUp: { n: number; p50: number; p99: number; max: number; failed: number };
  statusServerDown: { n: number; failedFast: number; maxMs: number; example?: string };
  statusWorkerDown: { n: number; answered: number; p99: number; max: number; example?: string };
  maxHistoryEvents: number;
  runs: number;
  chaosEvents: Record<string, number>;
  skippedEvents: number;
  timeLostMs: number;
  baselineMs: number;
  chaosMs: number;
}

/** Checks the chaos run `run` against the undisturbed `baseline`. */
export function checkSlo(run: RunResult, baseline: RunResult | undefined, limits: SloLimits): { checks: SloCheck[]; figures: SloFigures } {
  const checks: SloCheck[] = [];
  const add = (name: string, ok: boolean, detail: string): void => void checks.push({ name, ok, detail });

  add('no aborted run', run.aborted.length === 0, run.aborted.length === 0 ? 'every execution completed or continued as new' : run.aborted.map((a) => `${a.status} at ${a.at.toFixed(0)} s`).join('; '));
  const its = run.history.length;
  add('the loop ends at the configured iterations', run.stopReason === 'max_iterations' && its === limits.iterations, `stop reason ${String(run.stopReason)}, ${its}/${limits.iterations} iterations`);
  add(
    'lineage complete, no duplicate trajectory',
    run.lineage.problems.length === 0,
    run.lineage.problems.length === 0 ? `${its} iterations × (rollouts, scored set, dataset, checkpoint, eval); ${run.lineage.trajectories} trajectories, 0 duplicates` : run.lineage.problems.slice(0, 5).join('; '),
  );
  // Where the chaos changes the data (the sandbox configuration's injected faults are in its episodes), each iteration
  // is held to an undisturbed training of its own dataset — the schedule its trainer built from it — not to the
  // undisturbed run's count on other data.
  const scheduled = run.lineage.scheduledSteps;
  if (scheduled !== undefined) {
    const rows = run.history.map((h, i) => ({ i: h.iteration, got: h.train?.steps, want: scheduled[i] }));
    const mismatches = rows.filter((x) => x.want === undefined || x.got !== x.want);
    add(
      'optimiser steps per iteration as undisturbed',
      its > 0 && mismatches.length === 0,
      mismatches.length === 0
        ? `[${rows.map((r) => String(r.got)).join(',')}]: each its training's whole schedule on its dataset`
        : mismatches.map((m) => `iteration ${m.i}: ${String(m.got)} steps of a schedule of ${String(m.want)}`).join('; '),
    );
  } else if (baseline) {
    const mismatches = run.history
      .map((h, i) => ({ i: h.iteration, got: h.train?.steps, want: baseline.history[i]?.train?.steps }))
      .filter((x) => x.got === undefined || x.got !== x.want);
    const steps = run.history.map((h) => h.train?.steps ?? '?').join(',');
    add('optimiser steps per iteration as undisturbed', mismatches.length === 0 && baseline.history.length === its, mismatches.length === 0 ? `[${steps}] both` : mismatches.map((m) => `iteration ${m.i}: ${String(m.got)} vs ${String(m.want)}`).join('; '));
  } else if (limits.expectedSteps !== undefined) {
    const steps = run.history.map((h) => h.train?.steps);
    add('optimiser steps per iteration as undisturbed', its > 0 && steps.every((n) => n === limits.expectedSteps), `[${steps.map(String).join(',')}], undisturbed ${limits.expectedSteps} each (max_steps)`);
  }

  // Queries until the loop closed (after it, a query replays a closed run's whole history: another measurement).
  const samples = run.samples.filter((s) => s.at <= run.closedAtS);
  const clean = samples.filter((s) => s.before === 'up' && s.after === 'up');
  const upMs = clean.map((s) => s.ms);
  // During an outage: the query returned while the server was still down (one that saw the server come back meanwhile
  // is a transition, reported with the worker-down ones).
  const serverDown = samples.filter((s) => s.after === 'server-down');
  const workerDown = samples.filter((s) => s.after !== 'server-down' && (s.before !== 'up' || s.after !== 'up'));
  const statusUp = { n: clean.length, p50: percentile(upMs, 50), p99: percentile(upMs, 99), max: Math.max(0, ...upMs), failed: clean.filter((s) => !s.ok).length };
  // The slowest, with when they were sent: to be read beside the chaos events' times.
  const slowest = [...clean].sort((a, b) => b.ms - a.ms).slice(0, 3).map((s) => `${s.ms.toFixed(0)} ms at ${s.at.toFixed(0)} s`);
  add(
    'pipeline_status p99 < 100 ms while up',
    clean.length > 0 && statusUp.p99 < limits.statusP99Ms,
    `${clean.length} queries: p50 ${statusUp.p50.toFixed(1)} ms, p99 ${statusUp.p99.toFixed(1)} ms, max ${statusUp.max.toFixed(0)} ms, ${statusUp.failed} failed; slowest ${slowest.join(', ')}`,
  );
  const failedFast = serverDown.filter((s) => s.ok || (s.ms <= limits.outageFailMs && (s.error ?? '') !== ''));
  const statusServerDown = { n: serverDown.length, failedFast: failedFast.length, maxMs: Math.max(0, ...serverDown.map((s) => s.ms)), ...defined1('example', serverDown.find((s) => !s.ok)?.error) };
  add(
    'every query during an outage fails fast with a clear error',
    failedFast.length === serverDown.length,
    serverDown.length === 0 ? 'no query fell in an outage' : `${failedFast.length}/${serverDown.length} within ${limits.outageFailMs} ms (slowest ${statusServerDown.maxMs.toFixed(0)} ms)${statusServerDown.example ? `: "${statusServerDown.example.slice(0, 140)}"` : ''}`,
  );
  const wMs = workerDown.map((s) => s.ms);
  const statusWorkerDown = { n: workerDown.length, answered: workerDown.filter((s) => s.ok).length, p99: percentile(wMs, 99), max: Math.max(0, ...wMs), ...defined1('example', workerDown.find((s) => !s.ok)?.error) };

  const maxHistoryEvents = Math.max(0, ...run.runs.map((r) => r.events));
  add(`workflow history < ${limits.historyEvents} events per run`, run.runs.length > 0 && maxHistoryEvents < limits.historyEvents, `${run.runs.length} runs, the longest ${maxHistoryEvents} events`);
  const left = run.leftovers;
  const nothingLeft = left.processes.length === 0 && left.containers.length === 0 && left.tmpFiles.length === 0 && left.scratchDirRemoved;
  add(
    'no container, process or temporary file left',
    nothingLeft,
    nothingLeft ? 'none' : `processes [${left.processes.join(', ')}], containers [${left.containers.join(', ')}], tmp [${left.tmpFiles.slice(0, 5).join(', ')}], scratch dir removed: ${left.scratchDirRemoved}`,
  );
  const chaosEvents = eventCounts(run.events);
  const happened = Object.values(chaosEvents).reduce((a, b) => a + b, 0);
  const failedActions = run.events.filter((e) => e.error !== undefined);
  add(`at least ${limits.minChaosEvents} chaos events`, happened >= limits.minChaosEvents && failedActions.length === 0, `${happened} events${failedActions.length > 0 ? `; actions that failed: ${failedActions.map((e) => `${e.kind}: ${e.error ?? ''}`).join('; ')}` : ''}`);

  const figures: SloFigures = {
    statusQueries: samples.length,
    statusUp,
    statusServerDown,
    statusWorkerDown,
    maxHistoryEvents,
    runs: run.runs.length,
    chaosEvents,
    skippedEvents: run.events.filter((e) => e.skipped).length,
    timeLostMs: baseline ? run.wallMs - baseline.wallMs : Number.NaN,
    baselineMs: baseline?.wallMs ?? Number.NaN,
    chaosMs: run.wallMs,
  };
  return { checks, figures };
}

function defined1<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

/** The report as Markdown: the checks, the events by kind, the faults and the time lost. */
export function formatReport(run: RunResult, baseline: RunResult | undefined, slo: { checks: SloCheck[]; figures: SloFigures }): string {
  const f = slo.figures;
  const s = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(0)} s` : 'n/a');
  const lines = ['| SLO | result | figures |', '| --- | --- | --- |', ...slo.checks.map((c) => `| ${c.name} | ${c.ok ? 'pass' : '**FAIL**'} | ${c.detail.replaceAll('|', '/')} |`)];
  lines.push('', '| chaos event | count |', '| --- | --- |');
  for (const [k, n] of Object.entries(f.chaosEvents).sort()) lines.push(`| ${k} | ${n} |`);
  lines.push(`| (skipped: no target at that moment) | ${f.skippedEvents} |`);
  lines.push('', '| injected fault | requests | faults |', '| --- | --- | --- |');
  const tally = (name: string, t: { requests: number; faults: Record<string, number> } | undefined): void => {
    if (t) lines.push(`| ${name} | ${t.requests} | ${Object.entries(t.faults).map(([k, n]) => `${k}: ${n}`).join(', ')} |`);
  };
  tally('judge (429 / 500 / timeout)', run.faults.judge);
  tally('policy server (500)', run.faults.policy);
  if (run.faults.sandboxExec) lines.push(`| sandbox exec (refused) | | ${run.faults.sandboxExec.injected} seen in the stored episodes |`);
  lines.push(
    '',
    `Wall clock: undisturbed ${s(f.baselineMs)}, under chaos ${s(f.chaosMs)}; time lost to faults ${s(f.timeLostMs)}${baseline && Number.isFinite(f.timeLostMs) ? ` (${((100 * f.timeLostMs) / baseline.wallMs).toFixed(0)}%)` : ''}.`,
    `Status queries: ${f.statusQueries} (${f.statusUp.n} with everything up; ${f.statusServerDown.n} during a server outage; ${f.statusWorkerDown.n} while the workflow worker restarted or the server came back: ${f.statusWorkerDown.answered} answered, slowest ${f.statusWorkerDown.max.toFixed(0)} ms).`,
    `Restarts: ${run.restarts.map((r) => `${r.what} ${(r.ms / 1000).toFixed(1)} s`).join(', ') || 'none'}.`,
  );
  return lines.join('\n');
}

/**
 * The undisturbed run of an earlier report (`--out` of a soak of the same configuration, iterations and seed), so a
 * chaos run can be measured again against it without running it again: its optimiser steps and wall clock.
 */
export async function earlierBaseline(file: string, config: string, iterations: number, seed: number): Promise<RunResult> {
  let report: unknown;
  try {
    report = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`--baseline ${file}: cannot read it as a soak report (${err instanceof Error ? err.message : String(err)})`);
  }
  const r = report as { config?: unknown; iterations?: unknown; seed?: unknown; baseline?: Omit<RunResult, 'samples'> | null };
  if (r.baseline === undefined || r.baseline === null || !Array.isArray(r.baseline.history)) throw new Error(`--baseline ${file}: the report has no undisturbed run (field baseline)`);
  const differs = [['config', r.config, config], ['iterations', r.iterations, iterations], ['seed', r.seed, seed]].filter(([, got, want]) => got !== want);
  if (differs.length > 0) throw new Error(`--baseline ${file}: ${differs.map(([k, got, want]) => `${String(k)} ${JSON.stringify(got)} (this soak: ${JSON.stringify(want)})`).join(', ')}`);
  return { ...r.baseline, samples: [] };
}
