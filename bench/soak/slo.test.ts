import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IterationMetrics } from '../../src/loop/status.js';
import { soakConfig, undisturbedSteps, type RunResult } from './run.js';
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
  const where = { dir: '/tmp/soak', iterations: 3, seed: 0, judgeUrl: 'http://127.0.0.1:1/v1', servePort: 1 };

  it("counts an undisturbed SFT training's steps from its dataset: batches of batch_size, the short last one too", () => {
    const sft = undisturbedSteps(soakConfig('sandbox', where));
    expect([4, 5, 6, 1].map((n) => sft?.(n))).toEqual([2, 3, 3, 1]); // epochs 1, batch_size 2
    expect(undisturbedSteps(soakConfig('sandbox', { ...where, quick: { maxSteps: 2 } }))?.(6)).toBe(2);
    expect(undisturbedSteps(soakConfig('household', where))).toBeUndefined(); // RL: the undisturbed run's counts
  });

  it("holds each iteration to an undisturbed training of its own dataset, not to the undisturbed run's", () => {
    const history = [2, 3, 2].map((steps, i) => ({ iteration: i + 1, train: { steps } }) as IterationMetrics);
    const run = (steps: number[], records: number[]): RunResult =>
      ({
        aborted: [],
        stopReason: 'max_iterations',
        history: history.map((h, i) => ({ ...h, train: { steps: steps[i] } })),
        lineage: { problems: [], trajectories: 12, duplicates: 0, injectedExecFaults: 3, datasetRecords: records, undisturbedSteps: records.map((n) => Math.ceil(n / 2)) },
        samples: [],
        closedAtS: 1,
        runs: [],
        events: [],
        faults: {},
        restarts: [],
        leftovers: { processes: [], containers: [], tmpFiles: [], scratchDirRemoved: true },
        wallMs: 1,
      }) as unknown as RunResult;
    const baseline = run([2, 3, 2], [4, 5, 4]);
    const steps = (r: RunResult) => checkSlo(r, baseline, { ...DEFAULT_LIMITS, iterations: 3, minChaosEvents: 0 }).checks.find((c) => c.name.startsWith('optimiser steps'));
    // The faults made iteration 1's data 6 records: 3 steps is what an undisturbed training of it runs.
    expect(steps(run([3, 3, 2], [6, 5, 4]))).toMatchObject({ ok: true, detail: '[3/6,3/5,2/4] (steps/records): each as an undisturbed training of its dataset' });
    // A training cut short (or run past its schedule) is caught whatever the data.
    expect(steps(run([2, 3, 2], [6, 5, 4]))).toMatchObject({ ok: false, detail: 'iteration 1: 2 steps on 6 records, expected 3' });
  });
});
