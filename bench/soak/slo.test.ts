import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { earlierBaseline } from './slo.js';

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
