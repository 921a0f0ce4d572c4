import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IterationMetrics } from '../../src/loop/status.js';
import type { RunResult } from './run.js';
import { checkSlo, DEFAULT_LIMITS, earlierBaseline } from './slo.js';

describe('earlierBaseline (`npm run soak -- --baseline REPORT`)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gymflow-soak-report-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const report = async (body: unknown): Promise<string> => {
    const file = join(dir, 'report.json');
    await writeFile(file, typeof body === 'string' ? body : JSON.stringify(body));
    return file;
  };
  const baseline = { label: 'baseline', workflowId: 'soak-baseline-0', wallMs: 1_701_000, stopReason: 'max_iterations', history: [{ iteration: 1, train: { steps: 9 } }], samples: 1234 };

  it("takes an earlier report's undisturbed run, without its status samples", async () => {
    const file = await report({ config: 'household', iterations: 30, seed: 0, baseline });
    await expect(earlierBaseline(file, 'household', 30, 0)).resolves.toMatchObject({ wallMs: 1_701_000, history: baseline.history, samples: [] });
  });

  it('refuses a report of another configuration, size or seed, or one without an undisturbed run, naming the file and field', async () => {
    const file = await report({ config: 'household', iterations: 6, seed: 0, baseline });
    await expect(earlierBaseline(file, 'household', 30, 0)).rejects.toThrow(`--baseline ${file}: iterations 6 (this soak: 30)`);
    await expect(earlierBaseline(await report({ config: 'household', iterations: 30, seed: 0, baseline: null }), 'household', 30, 0)).rejects.toThrow(/has no undisturbed run \(field baseline\)/);
    await expect(earlierBaseline(await report('{"config": '), 'household', 30, 0)).rejects.toThrow(/cannot read it as a soak report/);
  });
});

describe('optimiser steps where the chaos changes the data (the sandbox configuration)', () => {
  it("holds each iteration to its training's schedule on its own dataset, not to the undisturbed run's count", () => {
    const run = (steps: number[], scheduled?: number[]): RunResult =>
      ({
        aborted: [],
        stopReason: 'max_iterations',
        history: steps.map((n, i) => ({ iteration: i + 1, train: { loss: null, steps: n } }) as IterationMetrics),
        lineage: { problems: [], trajectories: 12, duplicates: 0, injectedExecFaults: 3, ...(scheduled ? { scheduledSteps: scheduled } : {}) },
        samples: [],
        closedAtS: 1,
        runs: [],
        events: [],
        faults: {},
        restarts: [],
        leftovers: { processes: [], containers: [], tmpFiles: [], scratchDirRemoved: true },
        wallMs: 1,
      }) as unknown as RunResult;
    const baseline = run([2, 3, 2]);
    const steps = (r: RunResult) => checkSlo(r, baseline, { ...DEFAULT_LIMITS, iterations: 3, minChaosEvents: 0 }).checks.find((c) => c.name.startsWith('optimiser steps'));
    // The faults made iteration 1's data longer: 3 steps is its whole schedule.
    expect(steps(run([3, 3, 2], [3, 3, 2]))).toMatchObject({ ok: true, detail: '[3,3,2]: each its training\'s whole schedule on its dataset' });
    // A training cut short is caught whatever the data; without schedules the undisturbed run is the reference.
    expect(steps(run([2, 3, 2], [3, 3, 2]))).toMatchObject({ ok: false, detail: 'iteration 1: 2 steps of a schedule of 3' });
    expect(steps(run([3, 3, 2]))).toMatchObject({ ok: false, detail: 'iteration 1: 3 vs 2' });
  });
});
