/**
 * The fuzz soak (issue 50): every fuzz target of tests/fuzz with many cases (default 100,000 each). A failing
 * target prints its counterexample with the seed and path that replay it:
 *
 *   npx tsx bench/fuzz.ts [--runs N] [--seed S] [--target PREFIX] [--path P]
 *
 * `--seed S --path P --target NAME` replays exactly the failing case (fast-check's `fc.assert(p, { seed, path })`).
 * Writes bench/results/fuzz.json; exits 1 when any target failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
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
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { runs: 100_000, seed: Date.now() ^ (Math.random() * 0x7fffffff), target: undefined, path: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag}: needs a value`);
    i++;
    if (flag === '--runs') args.runs = Number(value);
    else if (flag === '--seed') args.seed = Number(value);
    else if (flag === '--target') args.target = value;
    else if (flag === '--path') args.path = value;
    else throw new Error(`unknown option ${flag}; known: --runs, --seed, --target, --path`);
  }
  if (!Number.isInteger(args.runs) || args.runs < 1) throw new Error(`--runs must be a positive integer`);
  if (!Number.isInteger(args.seed)) throw new Error(`--seed must be an integer`);
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const all: FuzzTarget[] = [...recorderTargets(), ...parserTargets(), ...openEnvTargets(), ...mcpTargets()];
  const targets = all.filter((t) => args.target === undefined || t.name.startsWith(args.target));
  if (targets.length === 0) throw new Error(`no target matches ${args.target}; targets: ${all.map((t) => t.name).join(', ')}`);
  const results: { target: string; runs: number; seed: number; ms: number; failed: boolean; path?: string; counterexample?: string; error?: string }[] = [];
  console.log(`fuzz soak: ${targets.length} target(s), ${args.runs} runs each, seed ${args.seed}`);
  console.log('| target | runs | ms | result |\n| --- | --- | --- | --- |');
  for (const target of targets) {
    await target.setup?.();
    const start = performance.now();
    try {
      const details = await fc.check(target.property() as fc.IAsyncProperty<unknown>, { numRuns: args.runs, seed: args.seed, ...defined({ path: args.path }) });
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
      await target.cleanup?.();
    }
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/fuzz.json', `${JSON.stringify({ seed: args.seed, runs: args.runs, results }, null, 2)}\n`);
  if (results.some((r) => r.failed)) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
