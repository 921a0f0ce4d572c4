/**
 * Reward throughput.
 *
 * 1. Rule layer: steps per second of the four step rules (redundancy, regression, information use,
 *    efficiency — `runRules`) and of the whole rule-only scorer (`scoreTrajectoryRules`: rules, combination
 *    and building the scored trajectory), on synthetic coding trajectories of 5, 50, 500 and 2,000 steps. One
 *    core (Node's main thread), several repetitions, median reported.
 * 2. Recorder conversion (hook): MB/s of `convertFile` from `src/recorder/convert.ts` over ~50 MB of
 *    claude-code session logs (the fixtures copied many times into a temp dir). Skipped, and said so, when
 *    that module does not exist yet.
 *
 * Prints a table and writes `bench/results/reward.json`. Usage: `npx tsx bench/reward.ts [--quick]`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runBench, writeReport } from './report.js';
import { getProfile } from '../src/core/profiles/registry.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { runRules } from '../src/reward/rules/run.js';
import { scoreTrajectoryRules } from '../src/reward/score.js';
import { syntheticTrajectory } from './synthetic-trajectories.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const QUICK = process.argv.includes('--quick');
/**
 * The lengths (50, 500 and 2,000 steps), and 5: the length of a tool-use episode, which is what an RL
 * loop scores by the thousand, and where what a trajectory costs besides its steps shows.
 */
const LENGTHS = [5, 50, 500, 2000];
const REPETITIONS = QUICK ? 3 : 9;
/** Steps scored per repetition (the pool of trajectories is cycled until this many). */
const STEPS_PER_REP = QUICK ? 50_000 : 300_000;
/** Distinct trajectories per length (cycled), so caches cannot remember one trajectory. */
const POOL_STEPS = 100_000;
const TARGET_STEPS_PER_SECOND = 1_000_000;

interface RuleRow {
  steps: number;
  trajectories: number;
  charsPerStep: number;
  /**
   * Steps per second of a bare loop that only reads every character of each step once (charCodeAt and
   * an add): the ceiling for any rule that looks at every character, on this machine.
   */
  readOnceStepsPerSecond: number;
  rulesStepsPerSecond: number;
  rulesMBPerSecond: number;
  scorerStepsPerSecond: number;
  repetitions: number;
  rulesSamples: number[];
  scorerSamples: number[];
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
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

function benchRules(): RuleRow[] {
  const profile = getProfile('coding');
  const rows: RuleRow[] = [];
  for (const length of LENGTHS) {
    const count = Math.max(2, Math.floor(POOL_STEPS / length));
    const pool = Array.from({ length: count }, (_, i) => syntheticTrajectory(length, 1000 * length + i));
    const chars = pool.reduce((a, t) => a + charsOf(t), 0) / (count * length);
    const rulesFn = (t: Trajectory): unknown => runRules(t, profile, { rubrics: 'all' });
    const scorerFn = (t: Trajectory): unknown => scoreTrajectoryRules(t, profile);
    // Warm-up: let the JIT settle on both paths.
    rate(pool, rulesFn);
    rate(pool, scorerFn);
    const texts = new Map(pool.map((t) => [t, textsOf(t)] as const));
    const readFn = (t: Trajectory): unknown => readOnce(texts.get(t) ?? []);
    rate(pool, readFn);
    const rulesSamples: number[] = [];
    const scorerSamples: number[] = [];
    const readSamples: number[] = [];
    for (let r = 0; r < REPETITIONS; r++) {
      rulesSamples.push(rate(pool, rulesFn));
      scorerSamples.push(rate(pool, scorerFn));
      readSamples.push(rate(pool, readFn));
    }
    const rulesRate = median(rulesSamples);
    rows.push({
      steps: length,
      trajectories: count,
      charsPerStep: Math.round(chars),
      readOnceStepsPerSecond: Math.round(median(readSamples)),
      rulesStepsPerSecond: Math.round(rulesRate),
      rulesMBPerSecond: Math.round((rulesRate * chars) / 1e6),
      scorerStepsPerSecond: Math.round(median(scorerSamples)),
      repetitions: REPETITIONS,
      rulesSamples: rulesSamples.map(Math.round),
      scorerSamples: scorerSamples.map(Math.round),
    });
  }
  return rows;
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

type ConvertFile = (file: string, options?: { format?: string }) => AsyncIterable<unknown>;

/**
 * Recorder conversion throughput (MB/s), measured when `src/recorder/convert.ts` exports `convertFile`.
 * The claude-code fixture sessions are copied into a temp dir until ~50 MB, then converted one by one.
 */
async function benchRecorderConversion(): Promise<RecorderResult> {
  const modulePath = path.join(HERE, '..', 'src', 'recorder', 'convert.ts');
  if (!existsSync(modulePath)) return { measured: false, reason: 'src/recorder/convert.ts does not exist yet' };
  const mod: Record<string, unknown> = (await import(pathToFileURL(modulePath).href)) as Record<string, unknown>;
  const convertFile = mod['convertFile'];
  if (typeof convertFile !== 'function') return { measured: false, reason: 'src/recorder/convert.ts has no convertFile export' };
  const fixtures = '/work/shared/fixtures/agent-logs/claude-code';
  const dirCandidates = [process.env['GYMFLOW_FIXTURES'] ? path.join(process.env['GYMFLOW_FIXTURES'], 'claude-code') : '', fixtures].filter((d) => d !== '' && existsSync(d));
  const dir = dirCandidates[0];
  if (dir === undefined) return { measured: false, reason: 'no claude-code fixtures found (set GYMFLOW_FIXTURES)' };
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
      for await (const item of (convertFile as ConvertFile)(f, { format: 'claude-code' })) {
        if ((item as { kind?: unknown }).kind === 'problem') problems++;
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
  const rows = benchRules();
  console.log(`Reward rule layer — one core, ${REPETITIONS} repetitions, median (node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'})`);
  console.log('');
  console.log('| steps/trajectory | chars/step | rules steps/s | rules MB/s | scorer steps/s | read-once ceiling steps/s | target 1,000,000 |');
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | :---: |');
  for (const r of rows) {
    console.log(
      `| ${fmt(r.steps)} | ${r.charsPerStep} | ${fmt(r.rulesStepsPerSecond)} | ${r.rulesMBPerSecond} | ${fmt(r.scorerStepsPerSecond)} | ${fmt(r.readOnceStepsPerSecond)} | ${r.rulesStepsPerSecond >= TARGET_STEPS_PER_SECOND ? 'met' : 'missed'} |`,
    );
  }
  console.log('');
  console.log('rules = runRules (the four step rules); scorer = scoreTrajectoryRules (rules + combination + the scored trajectory);');
  console.log('read-once ceiling = a bare loop reading each character of each step once, on this machine.');
  console.log(`load average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} on ${os.cpus().length} cores`);
  const recorder = await benchRecorderConversion();
  console.log('');
  if (recorder.measured) {
    console.log(`Recorder conversion (claude-code): ${(recorder.mbPerSecond ?? 0).toFixed(1)} MB/s over ${((recorder.bytes ?? 0) / 1e6).toFixed(1)} MB in ${recorder.files} files (${recorder.trajectories} trajectories, ${recorder.problems} problems)`);
  } else {
    console.log(`Recorder conversion: not measured (${recorder.reason})`);
  }
  await writeReport('reward', { quick: QUICK, targetStepsPerSecond: TARGET_STEPS_PER_SECOND, rules: rows, recorder });
}

runBench(main);
