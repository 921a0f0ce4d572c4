/**
 * `allOrNone` (workflows/all-or-none.ts), the collect stage's fan-out over its shards, on a real Temporal dev server:
 * when one shard fails for good, or the workflow is cancelled, it ends only once every shard has stopped — a shard that
 * takes a while to clean up (a sandbox shard removing its containers) is done before the workflow is. `Promise.all`,
 * which the stage used before, ended at the first failure with the slow shard still running: a cancelled collect
 * stage then left containers behind for a moment after the run had ended.
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { expect, it } from 'vitest';
import { shardsWorkflow, type ShardActivities, type ShardPlan } from './support/all-or-none-workflow.js';
import { requires } from './support/requires.js';
import { testWorker, useLocalTemporal } from './support/temporal.js';
import { until } from './support/until.js';

const temporal = requires.temporal();

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed or instantiated
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Shards started and shards stopped (returned, failed, or cancelled and cleaned up), by name. */
const started = new Set<string>();
const stopped = new Set<string>();

const activities: ShardActivities = {
  async shard(plan: ShardPlan) {
    const ctx = Context.current();
    started.add(plan.name);
    try {
      const end = Date.now() + plan.ms;
      while (Date.now() < end && !ctx.cancellationSignal.aborted) {
        ctx.heartbeat();
        await sleep(50);
      }
      if (ctx.cancellationSignal.aborted) {
        // Cleaning up, heartbeating meanwhile (as a shard does while its episodes in flight finish).
        for (const cleaned = Date.now() + plan.cleanupMs; Date.now() < cleaned; await sleep(50)) ctx.heartbeat();
        throw ctx.cancellationSignal.reason ?? new Error('cancelled');
      }
      if (plan.fail === true) throw ApplicationFailure.nonRetryable(`shard ${plan.name} failed`, 'SHARD_FAILED');
      return plan.name;
    } finally {
      stopped.add(plan.name);
    }
  },
};

/** One shard that fails after 1 s, and a slow one that would run 30 s and takes 3 s to clean up when cancelled. */
const failing = (tag: string): ShardPlan[] => [
  { name: `${tag}-fails`, ms: 1000, fail: true, cleanupMs: 0 },
  { name: `${tag}-slow`, ms: 30_000, cleanupMs: 3000 },
];

temporal.describe('allOrNone on a Temporal dev server', () => {
  const local = useLocalTemporal('gymflow-all-or-none-');

  it('returns every result in order; on a failure or a cancel, the workflow ends only after every shard has stopped', { timeout: 240_000 }, async () => {
    const { env } = local();
    const { worker, taskQueue } = await testWorker(env, 'all-or-none', new URL('./support/all-or-none-workflow.ts', import.meta.url), activities);
    const run = (plan: ShardPlan[], fanOut: 'allOrNone' | 'Promise.all') =>
      env.client.workflow.start(shardsWorkflow, { taskQueue, workflowId: `all-or-none-${randomUUID()}`, args: [plan, fanOut] });
    const failure = async (result: Promise<unknown>): Promise<unknown> => {
      const err: unknown = await result.then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      return (err as WorkflowFailedError).cause;
    };
    await worker.runUntil(async () => {
      const plan = [3, 1, 2].map((s, i) => ({ name: `ok-${i}`, ms: s * 200, cleanupMs: 0 }));
      expect(await (await run(plan, 'allOrNone')).result()).toEqual(['ok-0', 'ok-1', 'ok-2']);

      // A shard fails for good: the workflow fails with its error, and the slow shard was cancelled and stopped first.
      const failed = await failure((await run(failing('a'), 'allOrNone')).result());
      expect(String((failed as Error).cause)).toContain('shard a-fails failed');
      expect(stopped.has('a-slow')).toBe(true);

      // The workflow cancelled while both run: it ends as cancelled, after both stopped.
      const handle = await run(
        [
          { name: 'c-quick', ms: 30_000, cleanupMs: 0 },
          { name: 'c-slow', ms: 30_000, cleanupMs: 3000 },
        ],
        'allOrNone',
      );
      await until('both shards to start', 60_000, () => Promise.resolve(started.has('c-quick') && started.has('c-slow') ? true : undefined));
      await handle.cancel();
      expect(((await failure(handle.result())) as Error).name).toBe('CancelledFailure');
      expect([stopped.has('c-quick'), stopped.has('c-slow')]).toEqual([true, true]);

      // What the stage did before: Promise.all ends at the first failure, the slow shard still running.
      await failure((await run(failing('b'), 'Promise.all')).result());
      expect(stopped.has('b-slow')).toBe(false);
      await until('the slow shard to stop', 60_000, () => Promise.resolve(stopped.has('b-slow') ? true : undefined));
    });
  });
});
