/**
 * The soak's CI version (docs/operations.md "Soak"; the full one is `npm run soak`): 5 iterations of the household
 * loop — the policy acting through its server behind a proxy that fails 5% of requests, the judge failing 30% with
 * 429, 500 and timeouts — on a real dev server with real workers and the real trainer, while the seeded chaos
 * driver kills the workers and the trainer, restarts the server, pauses and resumes, cancels and continues, every
 * 12–22 s. The SLO holds: no aborted run, every iteration's lineage complete and without duplicates, the
 * optimiser steps of an undisturbed run, `pipeline_status` fast while up and failing fast while the server is
 * down, short histories, nothing left behind.
 *
 * Two cuts to make it shorter: a fixed number of optimiser steps per iteration (`max_steps`, so the undisturbed count
 * is known without a second run) and the expert as the evaluation's agent (one policy server per iteration, not two).
 * The issue asks for ≤ 6 minutes; on the shared 2-core development machine (2026-12-06, another suite running beside
 * it) an undisturbed iteration took ~50 s and each worker restart 7–25 s, and a first try reached iteration 3 after
 * 6 minutes and 9 events: the deadline here is 12 minutes. On an idle machine the loop is much faster (5 iterations
 * in 109 s, 2026-12-06), and chaos every 20–35 s gave only 3 events; every 8–15 s gave 17 events in 323 s and a p99 of 166 ms (more queries near a restart).
 * 12–22 s is between them, and the driver keeps up with the loop (`minEvents`, chaos.ts's pace): however fast the
 * machine, the 6 events have happened by the start of the last iteration.
 */
import { expect } from 'vitest';
import { DEFAULT_FAULT_RATES, runOnce } from '../bench/soak/run.js';
import { checkSlo, DEFAULT_LIMITS, formatReport } from '../bench/soak/slo.js';
import { requires } from './support/requires.js';

const temporal = requires.temporal();
const python = requires.python(['torch', 'gymflow_trainer']);

temporal.describe('soak (CI version)', () => {
  python.it('5 iterations under at least 6 chaos events and injected faults keep the SLO', async () => {
    const iterations = 5;
    const maxSteps = 3;
    const run = await runOnce({
      label: 'ci',
      config: 'household',
      iterations,
      seed: 1,
      chaos: { intervalMs: [12_000, 22_000], minEvents: 6 },
      faults: DEFAULT_FAULT_RATES,
      quick: { maxSteps },
      deadlineMs: 12 * 60_000,
      keep: process.env['GYMFLOW_KEEP_TEST_DIR'] === '1',
      log: (line) => console.log(line),
    });
    const slo = checkSlo(run, undefined, { ...DEFAULT_LIMITS, iterations, minChaosEvents: 6, expectedSteps: maxSteps });
    console.log(formatReport(run, undefined, slo));
    for (const check of slo.checks) expect.soft(check.ok, `${check.name}: ${check.detail}`).toBe(true);
    // The faults were there to survive.
    expect(run.faults.judge?.requests).toBeGreaterThan(0);
    expect(Object.values(run.faults.judge?.faults ?? {}).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(run.faults.policy?.faults['500']).toBeGreaterThan(0);
  }, 15 * 60_000);
});
