/**
 * The fuzz soak (issue 50): every fuzz target of tests/fuzz with many cases (default 100,000 each). A failing
 * target prints its counterexample with the seed and path that replay it:
 *
 *   npx tsx bench/fuzz.ts [--runs N] [--seed S] [--target PREFIX] [--path P] [--case-timeout MS]
 *
 * `--seed S --path P --target NAME` replays exactly the failing case (fast-check's `fc.assert(p, { seed, path })`).
 * A case that runs past `--case-timeout` (default 60 s) is a hang, even one that never yields (a synchronous endless
 * loop, which no in-process timer can interrupt): a watchdog thread prints the target, the seed and the case
 * number that replay it, records it and kills the process.
 * Writes bench/results/fuzz.json (after every target, so a killed run keeps what it did); exits 1 when any target
 * failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import type { FuzzTarget } from '../tests/fuzz/harness.js';
import { mcpTargets } from '../tests/fuzz/mcp.targets.js';
import { openEnvTargets } from '../tests/fuzz/openenv.targets.js';
import { parserTargets } from '../tests/fuzz/parsers.targets.js';
import { recorderTargets } from '../tests/fuzz/recorder.targets.js';
import { defined } from '../src/core/defined.js';

interface Args {
  runs: number;
  seed: number;
  target: string | undefined;
  path: string | undefined;
  caseTimeoutMs: number;
}

const RESULTS = 'bench/results/fuzz.json';

/**
 * The watchdog, a thread of its own: `beat[0]` counts the cases started, `beat[1]` is 1 while a target runs. When the
 * count stands still for `timeoutMs` during a target, the case in flight hangs: it says so, adds the hang to the
 * results file and kills the process (the main thread may be stuck in a loop that never yields).
 */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const { readFileSync, writeFileSync, writeSync } = require('node:fs');
const { beat, timeoutMs, results } = workerData;
let last = -1;
let since = Date.now();
setInterval(() => {
  const started = Atomics.load(beat, 0);
  if (Atomics.load(beat, 1) !== 1 || started !== last) { last = started; since = Date.now(); return; }
  if (Date.now() - since < timeoutMs) return;
  const report = JSON.parse(readFileSync(results, 'utf8'));
  const target = report.current;
  const hang = { target, runs: started, seed: report.seed, ms: Date.now() - since, failed: true, error: 'case ' + started + ' ran past ' + timeoutMs + ' ms: a hang' };
  report.results.push(hang);
  delete report.current;
  writeFileSync(results, JSON.stringify(report, null, 2) + '\\n');
  // Straight to the file descriptor: a worker's process.stderr goes through the main thread, which is stuck.
  writeSync(2, '\\n' + target + ': ' + hang.error + '\\n  replay: npx tsx bench/fuzz.ts --target ' + target + ' --seed ' + report.seed + ' --runs ' + started + '\\n');
  process.kill(process.pid, 'SIGKILL');
}, 1000);
`;

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { runs: 100_000, seed: Date.now() ^ (Math.random() * 0x7fffffff), target: undefined, path: undefined, caseTimeoutMs: 60_000 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag}: needs a value`);
    i++;
    if (flag === '--runs') args.runs = Number(value);
    else if (flag === '--seed') args.seed = Number(value);
    else if (flag === '--target') args.target = value;
    else if (flag === '--path') args.path = value;
    else if (flag === '--case-timeout') args.caseTimeoutMs = Number(value);
    else throw new Error(`unknown option ${flag}; known: --runs, --seed, --target, --path, --case-timeout`);
  }
  if (!Number.isInteger(args.runs) || args.runs < 1) throw new Error(`--runs must be a positive integer`);
  if (!Number.isInteger(args.seed)) throw new Error(`--seed must be an integer`);
  if (!Number.isInteger(args.caseTimeoutMs) || args.caseTimeoutMs < 1000) throw new Error(`--case-timeout must be an integer of at least 1000 (ms)`);
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const all: FuzzTarget[] = [...recorderTargets(), ...parserTargets(), ...openEnvTargets(), ...mcpTargets()];
  const targets = all.filter((t) => args.target === undefined || t.name.startsWith(args.target));
  if (targets.length === 0) throw new Error(`no target matches ${args.target}; targets: ${all.map((t) => t.name).join(', ')}`);
  const results: { target: string; runs: number; seed: number; ms: number; failed: boolean; path?: string; counterexample?: string; error?: string }[] = [];
  mkdirSync('bench/results', { recursive: true });
  const save = (current?: string): void => writeFileSync(RESULTS, `${JSON.stringify({ seed: args.seed, runs: args.runs, results, ...defined({ current }) }, null, 2)}\n`);
  const beat = new Int32Array(new SharedArrayBuffer(8));
  const watchdog = new Worker(WATCHDOG, { eval: true, workerData: { beat, timeoutMs: args.caseTimeoutMs, results: RESULTS } });
  watchdog.unref();
  console.log(`fuzz soak: ${targets.length} target(s), ${args.runs} runs each, seed ${args.seed}, a case past ${args.caseTimeoutMs} ms is a hang`);
  console.log('| target | runs | ms | result |\n| --- | --- | --- | --- |');
  for (const target of targets) {
    await target.setup?.();
    save(target.name);
    Atomics.store(beat, 0, 0);
    Atomics.store(beat, 1, 1);
    const start = performance.now();
    try {
      const details = await fc.check(target.property() as fc.IAsyncProperty<unknown>, {
        numRuns: args.runs,
        seed: args.seed,
        ...defined({ path: args.path }),
        plugins: [fc.beforeEach(() => void Atomics.add(beat, 0, 1))],
      });
      const ms = Math.round(performance.now() - start);
      if (details.failed) {
        const counterexample = fc.stringify(details.counterexample);
        const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
        results.push({ target: target.name, runs: details.numRuns, seed: details.seed, ms, failed: true, path: details.counterexamplePath ?? '', counterexample, error });
        console.log(`| ${target.name} | ${details.numRuns} | ${ms} | FAILED |`);
        console.error(`\n${target.name}: counterexample ${counterexample}\n  ${error}\n  replay: npx tsx bench/fuzz.ts --target ${target.name} --seed ${details.seed} --path ${details.counterexamplePath ?? ''} --runs 1\n  or fc.assert(property, { seed: ${details.seed}, path: ${JSON.stringify(details.counterexamplePath)} })\n`);
      } else {
        results.push({ target: target.name, runs: details.numRuns, seed: details.seed, ms, failed: false });
        console.log(`| ${target.name} | ${details.numRuns} | ${ms} | ok |`);
      }
    } finally {
      Atomics.store(beat, 1, 0);
      await target.cleanup?.();
    }
    save();
  }
  await watchdog.terminate();
  if (results.some((r) => r.failed)) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
