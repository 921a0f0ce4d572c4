/**
 * `npm run soak`: a long training loop under seeded chaos and injected faults, with a measured SLO
 * (docs/operations.md "Soak"). First an undisturbed run of the configuration (the reference for optimiser steps
 * and wall clock), then the same configuration and seed under chaos; prints the SLO table and writes JSON.
 *
 *   npm run soak -- [--iterations 30] [--minutes 120] [--seed 0] [--config household|sandbox]
 *                   [--interval 20-60] [--min-events N] [--temporal-address host:port] [--no-baseline | --baseline REPORT] [--out FILE] [--keep]
 *
 * Exit code 0 when every SLO check passed, 1 otherwise.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { DEFAULT_FAULT_RATES, runOnce, SOAK_CONFIGS, type RunResult, type SoakConfigName } from './soak/run.js';
import { checkSlo, DEFAULT_LIMITS, earlierBaseline, formatReport } from './soak/slo.js';
import { defined } from '../src/core/defined.js';

function positiveInt(v: string, flag: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag}: expected a positive integer, got '${v}'`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      iterations: { type: 'string', default: '30' },
      minutes: { type: 'string', default: '120' },
      seed: { type: 'string', default: '0' },
      config: { type: 'string', default: 'household' },
      interval: { type: 'string', default: '20-60' },
      'min-events': { type: 'string', default: '1' },
      'temporal-address': { type: 'string' },
      'no-baseline': { type: 'boolean', default: false },
      baseline: { type: 'string' },
      out: { type: 'string', default: 'soak-report.json' },
      keep: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const iterations = positiveInt(values.iterations, 'iterations');
  const minutes = positiveInt(values.minutes, 'minutes');
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed: expected an integer, got '${values.seed}'`);
  if (!(SOAK_CONFIGS as readonly string[]).includes(values.config)) throw new Error(`--config: expected one of ${SOAK_CONFIGS.join(', ')}, got '${values.config}'`);
  const config = values.config as SoakConfigName;
  const m = /^(\d+)-(\d+)$/.exec(values.interval);
  if (!m || Number(m[1]) > Number(m[2]) || Number(m[1]) < 1) throw new Error(`--interval: expected MIN-MAX seconds like 20-60, got '${values.interval}'`);
  const intervalMs = [Number(m[1]) * 1000, Number(m[2]) * 1000] as const;
  // At least this many events, kept up with the loop's progress (bench/soak/chaos.ts), and checked by the SLO.
  const minEvents = positiveInt(values['min-events'], 'min-events');
  const log = (line: string): void => console.error(`${new Date().toISOString().slice(11, 19)} ${line}`);
  const common = { config, iterations, seed, log, keep: values.keep, ...defined({ temporalAddress: values['temporal-address'] }) };

  // The deadline covers both runs: the baseline gets a third of it.
  const started = Date.now();
  let baseline: RunResult | undefined;
  if (values.baseline !== undefined) baseline = await earlierBaseline(values.baseline, config, iterations, seed);
  else if (!values['no-baseline']) baseline = await runOnce({ ...common, label: 'baseline', deadlineMs: (minutes * 60_000) / 3 });
  const run = await runOnce({ ...common, label: 'chaos', chaos: { intervalMs, minEvents }, faults: DEFAULT_FAULT_RATES, deadlineMs: minutes * 60_000 - (Date.now() - started) });
  const slo = checkSlo(run, baseline, { ...DEFAULT_LIMITS, iterations, minChaosEvents: minEvents });
  const report = formatReport(run, baseline, slo);
  console.log(`\nSoak: ${iterations} iterations of ${config}, seed ${seed}, chaos every ${values.interval} s, ${((Date.now() - started) / 60_000).toFixed(1)} minutes in all\n`);
  console.log(report);
  await writeFile(values.out, `${JSON.stringify({ config, iterations, seed, interval: values.interval, slo, baseline: baseline && { ...baseline, samples: baseline.samples.length }, run }, null, 1)}\n`);
  console.log(`\nJSON: ${values.out}`);
  if (!slo.checks.every((c) => c.ok)) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
