/**
 * `progressReporter` inside real activities on a real Temporal dev server: an activity's `stage_progress`
 * signals reach its workflow; a local activity sends none. A signal from a local activity arrives while the
 * workflow task that waits for it is open, so the server can reject the task's completion (an unhandled
 * command) and the SDK runs the local activity again: 40-second shards that signalled did so every time and
 * never finished.
 */
import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { expect, it } from 'vitest';
import { progressReporter } from '../activities/common.js';
import { progressWorkflow, type ProgressActivities } from './support/progress-workflow.js';
import { requires } from './support/requires.js';
import { testWorker, useLocalTemporal } from './support/temporal.js';

const temporal = requires.temporal();

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed or instantiated
}

/** Every unit reported at once, signals from the first unit on (the reporter's 2 s spacing still holds). */
const activities: ProgressActivities = {
  async reportProgress(units, gapMs) {
    const report = progressReporter('collect', 'episodes', { firstSignalAfterMs: 0 });
    for (let done = 1; done <= units; done++) {
      report(done, units);
      if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    return units;
  },
};

temporal.describe('progressReporter on a Temporal dev server', () => {
  const local = useLocalTemporal('gymflow-progress-');

  it('signals from an activity, and a local activity completes without signals or failed workflow tasks', { timeout: 240_000 }, async () => {
    const { env } = local();
    const { worker, taskQueue } = await testWorker(env, 'progress', new URL('./support/progress-workflow.ts', import.meta.url), activities);
    await worker.runUntil(async () => {
      const remote = await env.client.workflow.execute(progressWorkflow, { taskQueue, workflowId: `progress-${randomUUID()}`, args: ['activity', 5] });
      // the first unit's and the last one's (the others fall within 2 s of the first)
      expect(remote).toEqual({ done: 5, signals: [1, 5] });
      // All units at once: the last unit comes while the first unit's signal is still in flight, and follows it.
      const burst = await env.client.workflow.execute(progressWorkflow, { taskQueue, workflowId: `progress-${randomUUID()}`, args: ['activity', 5, 0] });
      expect(burst).toEqual({ done: 5, signals: [1, 5] });

      const handle = await env.client.workflow.start(progressWorkflow, { taskQueue, workflowId: `progress-${randomUUID()}`, args: ['local', 5] });
      expect(await handle.result()).toEqual({ done: 5, signals: [] });
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
    });
  });
});
