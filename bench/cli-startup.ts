/**
 * Start-up of the `gymflow` command: the median wall time of N runs (default 10, `--runs N`) of
 * `gymflow --help` and `gymflow envs` (output to /dev/null), run as
 * - `node bin/gymflow.js` — the command as `npm install` puts it on PATH (in a clone it first checks that dist/
 *   is not older than the sources, one `find`);
 * - `node dist/src/cli/main.js` — the build alone;
 * - `node --import tsx src/cli/main.ts` — the TypeScript sources through tsx's loader, as every command ran
 *   before the build (the commands load lazily there too, so the difference is what tsx costs);
 * beside `node -e 0`, Node's own start. The target is ≤ 300 ms for the first two. On Linux it also reports the CPU
 * time (user + system) each run cost, from this process's children's times in /proc/self/stat (10 ms ticks): on a
 * shared, loaded machine the wall time measures the other work as much as gymflow, the CPU time much less so. Prints a
 * table and writes `bench/results/cli-startup.json` (with the load average it ran under).
 *
 * Usage: `npm run bench:cli-startup [-- --runs 20]` (needs a fresh build: `npm run build`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { median, runBench, writeReport } from './report.js';

/** The start-up target of `gymflow --help` and `gymflow envs` (issue 42). */
const TARGET_MS = 300;

/** How gymflow is started: the node arguments before the command's own. */
const WAYS: readonly { name: string; args: readonly string[] }[] = [
  { name: 'bin/gymflow.js', args: [join(PACKAGE_ROOT, 'bin', 'gymflow.js')] },
  { name: 'dist (build alone)', args: [join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js')] },
  { name: 'tsx (sources)', args: ['--import', 'tsx', join(PACKAGE_ROOT, 'src', 'cli', 'main.ts')] },
];

const COMMANDS: readonly (readonly string[])[] = [['--help'], ['envs']];

interface Row {
  way: string;
  command: string;
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** The median CPU time (user + system) of a run; absent where /proc/self/stat is not there to read. */
  medianCpuMs?: number;
  runs: number;
}

/** A run's wall time and, where known, its CPU time, in milliseconds. */
interface Sample {
  wallMs: number;
  cpuMs: number | undefined;
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on every Linux that runs Node). */
const USER_HZ = 100;

/**
 * The CPU time (user + system) of this process's waited-for children so far, in ms: `cutime` and `cstime`, the 16th
 * and 17th fields of /proc/self/stat (counted after the command's closing parenthesis, which may contain spaces).
 * Undefined off Linux.
 */
function childrenCpuMs(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is the 3rd field (state): cutime (16th) and cstime (17th) are fields[13] and fields[14].
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / USER_HZ;
}

/** Each of `runs` runs of `node ...args`, after one unmeasured run (disk cache). */
function time(args: readonly string[], runs: number): Sample[] {
  const once = (): Sample => {
    const cpuBefore = childrenCpuMs();
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { cwd: PACKAGE_ROOT, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
    const cpuAfter = childrenCpuMs();
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(r.status ?? r.signal)}: ${r.stderr}`);
    return { wallMs, cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore };
  };
  once();
  return Array.from({ length: runs }, once);
}

function row(way: string, command: string, samples: readonly Sample[]): Row {
  const round = (x: number): number => Math.round(x * 10) / 10;
  const wall = samples.map((s) => s.wallMs);
  const cpu = samples.flatMap((s) => (s.cpuMs === undefined ? [] : [s.cpuMs]));
  return {
    way,
    command,
    medianMs: round(median(wall)),
    minMs: round(Math.min(...wall)),
    maxMs: round(Math.max(...wall)),
    ...(cpu.length === samples.length ? { medianCpuMs: round(median(cpu)) } : {}),
    runs: samples.length,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' } } });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got '${values.runs}'`);
  const check = spawnSync('bash', [join(PACKAGE_ROOT, 'scripts', 'build.sh'), '--check'], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(check.stderr.trim());

  const rows: Row[] = [row('node -e 0', '', time(['-e', '0'], runs))];
  for (const way of WAYS) for (const command of COMMANDS) rows.push(row(way.name, command.join(' '), time([...way.args, ...command], runs)));

  const header = `${'way'.padEnd(20)} ${'command'.padEnd(8)} ${'median ms'.padStart(9)} ${'min'.padStart(7)} ${'max'.padStart(7)} ${'cpu ms'.padStart(7)}  target`;
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const r of rows) {
    const target = r.way === 'node -e 0' || r.way.startsWith('tsx') ? '' : r.medianMs <= TARGET_MS ? `≤ ${TARGET_MS} ok` : `> ${TARGET_MS} MISSED`;
    const cpu = r.medianCpuMs === undefined ? '-' : r.medianCpuMs.toFixed(0);
    console.log(`${r.way.padEnd(20)} ${r.command.padEnd(8)} ${r.medianMs.toFixed(1).padStart(9)} ${r.minMs.toFixed(1).padStart(7)} ${r.maxMs.toFixed(1).padStart(7)} ${cpu.padStart(7)}  ${target}`);
  }
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} on ${os.cpus().length} cores`);
  await writeReport('cli-startup', { runs, targetMs: TARGET_MS, rows });
}

runBench(main);
