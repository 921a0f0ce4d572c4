/**
 * Smoke test against a real Temporal dev server (the `temporal` CLI from `.venv/`): a worker bundles
 * `tests/support/smoke-workflow.ts`, runs it, answers `pipeline_status`, takes an update and a signal, runs an activity.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { expect, it } from 'vitest';
import { requires } from './support/requires.js';
import * as activities from './support/smoke-activities.js';
import { finishSignal, setNoteUpdate, smokeStatusQuery, smokeWorkflow } from './support/smoke-workflow.js';
import { testWorker, useLocalTemporal } from './support/temporal.js';

const temporal = requires.temporal();

// The SDK logs every worker state change at INFO; keep test output to warnings. The runtime is a process-wide
// singleton: if another test file in this fork installed it already, keep that one.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed or instantiated
}

temporal.describe('Temporal dev server smoke', () => {
  const local = useLocalTemporal('gymflow-temporal-');

  it('runs a workflow with query, update, signal and activity', { timeout: 90_000 }, async () => {
    const { env } = local();
    const client = env.client;
    const { worker, taskQueue } = await testWorker(env, 'smoke', new URL('./support/smoke-workflow.ts', import.meta.url), activities);

    const result = await worker.runUntil(async () => {
      const handle = await client.workflow.start(smokeWorkflow, {
        taskQueue,
        workflowId: `smoke-${randomUUID()}`,
        args: ['gymflow'],
      });
      // The workflow blocks on the signal, so the status is deterministic here.
      expect(await handle.query(smokeStatusQuery)).toEqual({ stage: 'waiting', progress: 0 });

      expect(await handle.executeUpdate(setNoteUpdate, { args: ['smoke'] })).toBeUndefined();
      await expect(handle.executeUpdate(setNoteUpdate, { args: ['  '] })).rejects.toBeInstanceOf(
        WorkflowUpdateFailedError,
      );
      expect(await handle.query(smokeStatusQuery)).toEqual({ stage: 'waiting', progress: 0, note: 'smoke' });

      await handle.signal(finishSignal);
      const greeting = await handle.result();
      // A completed workflow still answers queries (replayed by the worker).
      expect(await handle.query(smokeStatusQuery)).toEqual({ stage: 'done', progress: 1, note: 'smoke' });
      return greeting;
    });

    expect(result).toBe('hello, gymflow (attempt 1)');
  });
});
