/**
 * A change to the reward rule layer against a base commit, in one process.
 *
 * This machine's speed drifts by 5–10% from one run to the next and more over an hour, so two runs of
 * `reward.ts`, one per version, cannot show an effect of a few percent. Here both versions run in the same
 * process, in turns of ~30,000 steps, alternating which goes first: the base is a temporary git worktree of
 * `--base` (its WebAssembly module built there, its modules imported beside this tree's), and the change is
 * this working tree, uncommitted edits included. Each round gives a ratio (this tree's time over the base's)
 * from two turns a fraction of a second apart, and the median ratio over the rounds is reported with its
 * interquartile range. Run it with `--base HEAD` on an unchanged tree to see the spread of identical code.
 *
 * Before timing, it checks that both versions give the same verdicts on each pool's first trajectories,
 * and says so when they do not (a speed-up that changes verdicts is a different rule).
 *
 * Usage: `npx tsx bench/reward-compare.ts --base REF [--lengths 5,50,500,2000] [--rounds 40] [--no-agent-logs]`.
 * Prints a table and writes `bench/results/reward-compare.json`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { DomainProfile } from '../src/core/profiles/profile.js';
import { getProfile } from '../src/core/profiles/registry.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { quantileSorted } from '../src/core/stats/descriptive.js';
import { runRules, type RuleRun } from '../src/reward/rules/run.js';
import { runBench, writeReport } from './report.js';
import { agentLogPool, syntheticPool } from './reward-pools.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

const REPO = PACKAGE_ROOT;
/** Steps per turn: long enough that timer and loop overhead vanish, short enough that drift between the
 * two turns of a round is small. */
const TURN_STEPS = 30_000;
const WARMUP_ROUNDS = 10;
/** Trajectories per pool whose verdicts are compared. */
const CHECKED = 50;

type RunRules = (t: Trajectory, profile: DomainProfile, options: { rubrics: 'all' }) => Pick<RuleRun, 'columns'>;

interface Version {
  run: RunRules;
  profile: DomainProfile;
}

interface Options {
  base: string;
  lengths: number[];
  rounds: number;
  agentLogs: boolean;
}

function usage(problem: string): Error {
  return new Error(`${problem}\nusage: npx tsx bench/reward-compare.ts --base REF [--lengths 5,50,500,2000] [--rounds 40] [--no-agent-logs]`);
}

function parseArgs(argv: readonly string[]): Options {
  const options: Options = { base: '', lengths: [5, 50, 500, 2000], rounds: 40, agentLogs: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw usage(`${arg} needs a value`);
      return v;
    };
    if (arg === '--base') {
      options.base = value();
    } else if (arg === '--lengths') {
      const raw = value();
      options.lengths = raw.split(',').map((x) => Number(x));
      if (options.lengths.some((n) => !Number.isInteger(n) || n < 1)) throw usage(`--lengths: expected positive integers separated by commas, got ${JSON.stringify(raw)}`);
    } else if (arg === '--rounds') {
      const raw = value();
      options.rounds = Number(raw);
      if (!Number.isInteger(options.rounds) || options.rounds < 4) throw usage(`--rounds: expected an integer >= 4, got ${JSON.stringify(raw)}`);
    } else if (arg === '--no-agent-logs') {
      options.agentLogs = false;
    } else {
      throw usage(`unknown argument ${JSON.stringify(arg)}`);
    }
  }
  if (options.base === '') throw usage('--base is required (a commit, branch or tag to compare this working tree against)');
  return options;
}

function git(args: readonly string[], cwd = REPO): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A worktree of `commit` with node_modules linked and the WebAssembly module built; removed by `dispose`. */
function baseWorktree(commit: string): { dir: string; dispose: () => void } {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'gymflow-reward-compare-'));
  const dir = path.join(parent, 'base');
  git(['worktree', 'add', '--detach', dir, commit]);
  const dispose = (): void => {
    try {
      git(['worktree', 'remove', '--force', dir]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  };
  try {
    symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const build = path.join(dir, 'scripts', 'build-wasm.sh');
    if (existsSync(build)) execFileSync('bash', [build], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    return { dir, dispose };
  } catch (err) {
    dispose();
    throw err;
  }
}

async function loadBase(dir: string): Promise<Version> {
  const runModule = pathToFileURL(path.join(dir, 'src', 'reward', 'rules', 'run.ts')).href;
  const registryModule = pathToFileURL(path.join(dir, 'src', 'core', 'profiles', 'registry.ts')).href;
  const { runRules: run } = (await import(runModule)) as { runRules?: unknown };
  const { getProfile: profileOf } = (await import(registryModule)) as { getProfile?: unknown };
  if (typeof run !== 'function' || typeof profileOf !== 'function') {
    throw new Error(`the base has no runRules in src/reward/rules/run.ts or no getProfile in src/core/profiles/registry.ts: too old to compare`);
  }
  return { run: run as RunRules, profile: (profileOf as (name: string) => DomainProfile)('coding') };
}

/** The verdict columns of a run, as one comparable string. */
function verdicts(run: Pick<RuleRun, 'columns'>): string {
  return JSON.stringify(run.columns.map((c) => [c.rubric, Array.from(c.scores), Array.from(c.codes), Array.from(c.refs), Array.from(c.counts)]));
}

interface PoolResult {
  pool: string;
  stepsPerTrajectory: number;
  trajectories: number;
  /** Trajectories (of the first `checked`) whose verdicts differ between the versions. */
  verdictsDiffer: number;
  checked: number;
  baseNsPerStep: number;
  changeNsPerStep: number;
  /** Median over rounds of (this tree's ns per step) / (the base's), and its quartiles. */
  ratio: number;
  ratioQ1: number;
  ratioQ3: number;
  ratios: number[];
}

async function comparePool(label: string, pool: readonly Trajectory[], base: Version, change: Version, rounds: number): Promise<PoolResult> {
  const checked = Math.min(CHECKED, pool.length);
  let verdictsDiffer = 0;
  for (let i = 0; i < checked; i++) {
    const t = pool[i] as Trajectory;
    if (verdicts(base.run(t, base.profile, { rubrics: 'all' })) !== verdicts(change.run(t, change.profile, { rubrics: 'all' }))) verdictsDiffer++;
  }
  let cursor = 0;
  const turn = (v: Version): number => {
    let steps = 0;
    const start = process.hrtime.bigint();
    while (steps < TURN_STEPS) {
      const t = pool[cursor] as Trajectory;
      v.run(t, v.profile, { rubrics: 'all' });
      steps += t.steps.length;
      cursor = (cursor + 1) % pool.length;
    }
    return Number(process.hrtime.bigint() - start) / steps;
  };
  for (let r = 0; r < WARMUP_ROUNDS; r++) {
    turn(base);
    turn(change);
  }
  const baseNs: number[] = [];
  const changeNs: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // Alternate which version goes first, so neither always runs on a cache the other warmed.
    let b: number;
    let c: number;
    if (r % 2 === 0) {
      b = turn(base);
      c = turn(change);
    } else {
      c = turn(change);
      b = turn(base);
    }
    baseNs.push(b);
    changeNs.push(c);
    ratios.push(c / b);
    // between rounds, let a Ctrl-C reach its handler (which removes the worktree)
    await nextTurn();
  }
  const sorted = (xs: readonly number[]): number[] => [...xs].sort((x, y) => x - y);
  const median = (xs: readonly number[]): number => quantileSorted(sorted(xs), 0.5);
  const byRatio = sorted(ratios);
  const steps = pool.reduce((a, t) => a + t.steps.length, 0);
  return {
    pool: label,
    stepsPerTrajectory: Math.round((10 * steps) / pool.length) / 10,
    trajectories: pool.length,
    verdictsDiffer,
    checked,
    baseNsPerStep: Math.round(median(baseNs)),
    changeNsPerStep: Math.round(median(changeNs)),
    ratio: quantileSorted(byRatio, 0.5),
    ratioQ1: quantileSorted(byRatio, 0.25),
    ratioQ3: quantileSorted(byRatio, 0.75),
    ratios: ratios.map((x) => Math.round(x * 1000) / 1000),
  };
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  let commit: string;
  try {
    commit = git(['rev-parse', '--verify', `${options.base}^{commit}`]);
  } catch {
    throw usage(`--base ${JSON.stringify(options.base)}: no such commit in ${REPO}`);
  }
  const dirty = git(['status', '--porcelain']) !== '';
  const worktree = baseWorktree(commit);
  const interrupted = (): void => {
    worktree.dispose();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    const base = await loadBase(worktree.dir);
    const change: Version = { run: runRules, profile: getProfile('coding') };
    const pools: [string, Trajectory[]][] = options.lengths.map((n) => [`synthetic, ${n} steps`, syntheticPool(n)]);
    if (options.agentLogs) {
      const logs = await agentLogPool();
      if (Array.isArray(logs)) pools.push([`${logs.length} converted agent logs`, logs]);
      else console.log(`agent logs: not compared (${logs.reason})`);
    }
    console.log(`Rule layer (runRules, the four step rules): this working tree${dirty ? ' (with uncommitted changes)' : ''} against ${options.base} (${commit.slice(0, 10)})`);
    console.log(`${options.rounds} rounds per pool, each a turn of ~${TURN_STEPS.toLocaleString('en-US')} steps per version in alternating order; node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}`);
    console.log('');
    console.log('| trajectories | base ns/step | this tree ns/step | ratio (median) | ratio IQR | verdicts |');
    console.log('| --- | ---: | ---: | ---: | :---: | --- |');
    const results: PoolResult[] = [];
    for (const [label, pool] of pools) {
      const r = await comparePool(label, pool, base, change, options.rounds);
      results.push(r);
      const same = r.verdictsDiffer === 0 ? `same on ${r.checked}` : `**differ on ${r.verdictsDiffer} of ${r.checked}**`;
      console.log(`| ${label} | ${r.baseNsPerStep} | ${r.changeNsPerStep} | ${r.ratio.toFixed(3)} | ${r.ratioQ1.toFixed(3)}–${r.ratioQ3.toFixed(3)} | ${same} |`);
    }
    console.log('');
    console.log('ratio = this tree\'s time per step over the base\'s in the same round (< 1: faster).');
    await writeReport('reward-compare', { base: options.base, baseCommit: commit, uncommittedChanges: dirty, rounds: options.rounds, turnSteps: TURN_STEPS, pools: results });
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    worktree.dispose();
  }
}

runBench(main);
