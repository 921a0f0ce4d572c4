/**
 * Reward throughput.
 *
 * 1. Rule layer: steps per second of the four step rules (redundancy, regression, information use,
 *    efficiency — `runRules`) and of the whole rule-only scorer (`scoreTrajectoryRules`: rules, combination
 *    and building the scored trajectory), on synthetic coding trajectories of 5, 50, 500 and 2,000 steps,
 *    and on the real agent logs of the fixtures (`../shared/fixtures/agent-logs`, or `GYMFLOW_FIXTURES`),
 *    converted. One core (Node's main thread), several repetitions, median reported. Beside them, two
 *    ceilings on the same texts: reading every character once in JavaScript, and copying them into a byte
 *    buffer as the WebAssembly token index receives them.
 * 2. Recorder conversion: MB/s of `convertFile` over ~50 MB of claude-code session logs (the fixtures copied
 *    many times into a temp dir). Skipped, and said so, without the fixtures.
 *
 * Prints a table and writes `bench/results/reward.json`. Usage: `npx tsx bench/reward.ts [--quick]`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { median, runBench, writeReport } from './report.js';
import { getProfile } from '../src/core/profiles/registry.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { isConversionProblem } from '../src/recorder/adapter.js';
import { convertFile } from '../src/recorder/convert.js';
import { FIXTURES } from '../src/recorder/__fixtures__/fixtures.js';
import { runRules } from '../src/reward/rules/run.js';
import { SHORT_STRING } from '../src/reward/rules/token-index.js';
import { scoreTrajectoryRules } from '../src/reward/score.js';
import { agentLogPool, syntheticPool } from './reward-pools.js';

const QUICK = process.argv.includes('--quick');
/**
 * The lengths (50, 500 and 2,000 steps), and 5: the length of a tool-use episode, which is what an RL
 * loop scores by the thousand, and where what a trajectory costs besides its steps shows.
 */
const LENGTHS = [5, 50, 500, 2000];
const REPETITIONS = QUICK ? 3 : 9;
/** Steps scored per repetition (the pool of trajectories is cycled until this many). */
const STEPS_PER_REP = QUICK ? 50_000 : 300_000;
const TARGET_STEPS_PER_SECOND = 1_000_000;

interface RuleRow {
  /** `synthetic` (trajectories of `steps` steps) or `agent-logs` (the converted fixtures; `steps` is their mean). */
  pool: 'synthetic' | 'agent-logs';
  steps: number;
  trajectories: number;
  charsPerStep: number;
  /**
   * Steps per second of a bare loop that only reads every character of each step once (charCodeAt and
   * an add): the ceiling for any rule that looks at every character, on this machine.
   */
  readOnceStepsPerSecond: number;
  /**
   * Steps per second of a bare loop that only copies each step's texts into a byte buffer the way the
   * WebAssembly token index receives them (short ASCII strings by a loop, the others with
   * `TextEncoder.encodeInto`): the ceiling for any rule layer that reads the trajectory's text in
   * WebAssembly, before it looks at a single byte.
   */
  copyInStepsPerSecond: number;
  rulesStepsPerSecond: number;
  rulesMBPerSecond: number;
  scorerStepsPerSecond: number;
  repetitions: number;
  rulesSamples: number[];
  scorerSamples: number[];
}

function now(): number {
  return Number(process.hrtime.bigint()) / 1e9;
}

function charsOf(t: Trajectory): number {
  let c = t.task.instruction.length;
  for (const s of t.steps) c += s.observation.length + JSON.stringify(s.action.params).length;
  return c;
}

/** Every string a rule reads in a step: the observation and the string values of the params. */
function textsOf(t: Trajectory): string[] {
  const out: string[] = [t.task.instruction];
  for (const s of t.steps) {
    out.push(s.observation);
    for (const v of Object.values(s.action.params)) if (typeof v === 'string') out.push(v);
  }
  return out;
}

/** A bare read of every character: `charCodeAt` and an add. */
function readOnce(texts: readonly string[]): number {
  let x = 0;
  for (const s of texts) for (let i = 0; i < s.length; i++) x = (x + s.charCodeAt(i)) | 0;
  return x;
}

const COPY_BUFFER = new Uint8Array(1 << 20);
const ENCODER = new TextEncoder();

/** Copies every text into {@link COPY_BUFFER} (each at its start), as the token index copies texts in. */
function copyIn(texts: readonly string[]): number {
  const buffer = COPY_BUFFER;
  let written = 0;
  for (const s of texts) {
    const n = s.length;
    let i = 0;
    if (n <= SHORT_STRING) {
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buffer[i] = c;
      }
    }
    written += i === n ? n : ENCODER.encodeInto(s, buffer).written;
  }
  return written;
}

/** Runs `fn` over the pool until `STEPS_PER_REP` steps; returns steps per second. */
function rate(pool: readonly Trajectory[], fn: (t: Trajectory) => unknown): number {
  let steps = 0;
  let k = 0;
  let sink = 0;
  const start = now();
  while (steps < STEPS_PER_REP) {
    const t = pool[k % pool.length] as Trajectory;
    const r = fn(t);
    if (r !== undefined) sink++;
    steps += t.steps.length;
    k++;
  }
  const seconds = now() - start;
  if (sink < 0) console.log(sink);
  return steps / seconds;
}

/** Measures the rule layer, the scorer and the read-once ceiling on a pool of trajectories (cycled). */
function measure(kind: RuleRow['pool'], pool: readonly Trajectory[]): RuleRow {
  const profile = getProfile('coding');
  const steps = pool.reduce((a, t) => a + t.steps.length, 0);
  const chars = pool.reduce((a, t) => a + charsOf(t), 0) / steps;
  const rulesFn = (t: Trajectory): unknown => runRules(t, profile, { rubrics: 'all' });
  const scorerFn = (t: Trajectory): unknown => scoreTrajectoryRules(t, profile);
  // Warm-up: let the JIT settle on both paths.
  rate(pool, rulesFn);
  rate(pool, scorerFn);
  const texts = new Map(pool.map((t) => [t, textsOf(t)] as const));
  const readFn = (t: Trajectory): unknown => readOnce(texts.get(t) ?? []);
  const copyFn = (t: Trajectory): unknown => copyIn(texts.get(t) ?? []);
  rate(pool, readFn);
  rate(pool, copyFn);
  const rulesSamples: number[] = [];
  const scorerSamples: number[] = [];
  const readSamples: number[] = [];
  const copySamples: number[] = [];
  for (let r = 0; r < REPETITIONS; r++) {
    rulesSamples.push(rate(pool, rulesFn));
    scorerSamples.push(rate(pool, scorerFn));
    readSamples.push(rate(pool, readFn));
    copySamples.push(rate(pool, copyFn));
  }
  const rulesRate = median(rulesSamples);
  return {
    pool: kind,
    steps: Math.round((10 * steps) / pool.length) / 10,
    trajectories: pool.length,
    charsPerStep: Math.round(chars),
    readOnceStepsPerSecond: Math.round(median(readSamples)),
    copyInStepsPerSecond: Math.round(median(copySamples)),
    rulesStepsPerSecond: Math.round(rulesRate),
    rulesMBPerSecond: Math.round((rulesRate * chars) / 1e6),
    scorerStepsPerSecond: Math.round(median(scorerSamples)),
    repetitions: REPETITIONS,
    rulesSamples: rulesSamples.map(Math.round),
    scorerSamples: scorerSamples.map(Math.round),
  };
}

function benchSynthetic(): RuleRow[] {
  return LENGTHS.map((length) => measure('synthetic', syntheticPool(length)));
}

/** The rule layer on every converted agent-log fixture (real logs: longer observations and params). */
async function benchAgentLogs(): Promise<RuleRow | { measured: false; reason: string }> {
  const pool = await agentLogPool();
  if (!Array.isArray(pool)) return { measured: false, ...pool };
  return measure('agent-logs', pool);
}

interface RecorderResult {
  measured: boolean;
  reason?: string;
  bytes?: number;
  files?: number;
  seconds?: number;
  mbPerSecond?: number;
  trajectories?: number;
  problems?: number;
}

/**
 * Recorder conversion throughput (MB/s): the claude-code fixture sessions are copied into a temp dir until
 * ~50 MB, then converted one by one.
 */
async function benchRecorderConversion(): Promise<RecorderResult> {
  const dir = path.join(FIXTURES, 'claude-code');
  if (!existsSync(dir)) return { measured: false, reason: `no claude-code fixtures at ${dir} (set GYMFLOW_FIXTURES)` };
  const sources = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => path.join(dir, f));
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-recorder-'));
  try {
    const target = QUICK ? 5e6 : 50e6;
    let bytes = 0;
    const files: string[] = [];
    for (let i = 0; bytes < target; i++) {
      const src = sources[i % sources.length] as string;
      const dest = path.join(tmp, `${i}-${path.basename(src)}`);
      await writeFile(dest, readFileSync(src));
      bytes += statSync(dest).size;
      files.push(dest);
    }
    let trajectories = 0;
    let problems = 0;
    const start = now();
    for (const f of files) {
      for await (const item of convertFile(f, { format: 'claude-code' })) {
        if (isConversionProblem(item)) problems++;
        else trajectories++;
      }
    }
    const seconds = now() - start;
    return { measured: true, bytes, files: files.length, seconds, mbPerSecond: bytes / 1e6 / seconds, trajectories, problems };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

async function main(): Promise<void> {
  const rows = benchSynthetic();
  const logs = await benchAgentLogs();
  if ('rulesStepsPerSecond' in logs) rows.push(logs);
  console.log(`Reward rule layer — one core, ${REPETITIONS} repetitions, median (node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'})`);
  console.log('');
  console.log('| trajectories | steps/trajectory | chars/step | rules steps/s | rules MB/s | scorer steps/s | read-once ceiling steps/s | copy-in ceiling steps/s | target 1,000,000 |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: |');
  for (const r of rows) {
    // The target is the issue's, for the synthetic lengths; real logs carry far more text per step.
    const target = r.pool === 'agent-logs' ? '—' : r.rulesStepsPerSecond >= TARGET_STEPS_PER_SECOND ? 'met' : 'missed';
    const label = r.pool === 'agent-logs' ? `${r.trajectories} converted agent logs` : 'synthetic';
    console.log(
      `| ${label} | ${fmt(r.steps)} | ${r.charsPerStep} | ${fmt(r.rulesStepsPerSecond)} | ${r.rulesMBPerSecond} | ${fmt(r.scorerStepsPerSecond)} | ${fmt(r.readOnceStepsPerSecond)} | ${fmt(r.copyInStepsPerSecond)} | ${target} |`,
    );
  }
  if (!('rulesStepsPerSecond' in logs)) console.log(`\nAgent logs: not measured (${logs.reason})`);
  console.log('');
  console.log('rules = runRules (the four step rules); scorer = scoreTrajectoryRules (rules + combination + the scored trajectory);');
  console.log('read-once ceiling = a bare loop reading each character of each step once, on this machine;');
  console.log('copy-in ceiling = a bare loop copying each step\'s texts into a byte buffer as the WebAssembly index receives them.');
  console.log(`load average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} on ${os.cpus().length} cores`);
  const recorder = await benchRecorderConversion();
  console.log('');
  if (recorder.measured) {
    console.log(`Recorder conversion (claude-code): ${(recorder.mbPerSecond ?? 0).toFixed(1)} MB/s over ${((recorder.bytes ?? 0) / 1e6).toFixed(1)} MB in ${recorder.files} files (${recorder.trajectories} trajectories, ${recorder.problems} problems)`);
  } else {
    console.log(`Recorder conversion: not measured (${recorder.reason})`);
  }
  await writeReport('reward', { quick: QUICK, targetStepsPerSecond: TARGET_STEPS_PER_SECOND, rules: rows, agentLogs: 'rulesStepsPerSecond' in logs ? 'measured' : logs.reason, recorder });
}

runBench(main);
