import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { progressReporter, type ProgressReporterOptions } from './common.js';

interface Reported {
  beats: unknown[];
  signals: { done: number; total: number }[];
}

/**
 * Runs `calls` ([milliseconds since the start, done, total]) through a reporter inside an activity context
 * whose heartbeats and progress signals are recorded (the client only records the signal).
 */
async function report(calls: readonly [number, number, number][], options?: ProgressReporterOptions, info: { isLocal?: boolean } = {}): Promise<Reported> {
  const out: Reported = { beats: [], signals: [] };
  const client = {
    withAbortSignal: <T>(_signal: AbortSignal, fn: () => T): T => fn(),
    workflow: {
      getHandle: () => ({
        signal: async (_signal: unknown, progress: { done: number; total: number }) => {
          out.signals.push({ done: progress.done, total: progress.total });
        },
      }),
    },
  } as unknown as Client;
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'w', runId: 'r' }, ...info }, { client });
  env.on('heartbeat', (details: unknown) => out.beats.push(details));
  const start = Date.now();
  await env.run(async () => {
    const r = progressReporter('collect', 'episodes', options);
    for (const [at, done, total] of calls) {
      vi.setSystemTime(start + at);
      r(done, total);
      // lets a signal in flight settle, as the activity's own awaits would
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
  return out;
}

describe('progressReporter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('by default beats on every call and signals on the first unit, every 2 s and on the last', async () => {
    const r = await report([
      [0, 1, 5],
      [10, 2, 5],
      [2_100, 3, 5],
      [2_200, 4, 5],
      [2_300, 5, 5],
    ]);
    expect(r.beats).toEqual([1, 2, 3, 4, 5].map((done) => ({ done, total: 5 })));
    expect(r.signals.map((s) => s.done)).toEqual([1, 3, 5]);
  });

  it('with a heartbeat interval skips the beats in between, never the last', async () => {
    const calls: [number, number, number][] = Array.from({ length: 30 }, (_, i) => [i * 10, i + 1, 30]);
    const r = await report(calls, { heartbeatIntervalMs: 100 });
    // at 0, 100 and 200 ms, then the last unit (290 ms)
    expect(r.beats).toEqual([1, 11, 21, 30].map((done) => ({ done, total: 30 })));
  });

  it('sends no signal for a shard shorter than firstSignalAfterMs', async () => {
    const calls: [number, number, number][] = Array.from({ length: 20 }, (_, i) => [i * 50, i + 1, 20]);
    const r = await report(calls, { heartbeatIntervalMs: 100, firstSignalAfterMs: 2_000 });
    expect(r.signals).toEqual([]);
    expect(r.beats.at(-1)).toEqual({ done: 20, total: 20 });
  });

  it('signals a long shard from firstSignalAfterMs on, every 2 s, and on its last unit', async () => {
    const calls: [number, number, number][] = Array.from({ length: 50 }, (_, i) => [i * 100, i + 1, 50]);
    const r = await report(calls, { heartbeatIntervalMs: 100, firstSignalAfterMs: 2_000 });
    // units at 2.0 s and 4.0 s, then the last (4.9 s)
    expect(r.signals.map((s) => s.done)).toEqual([21, 41, 50]);
    expect(r.beats).toHaveLength(50);
  });

  it('in a local activity sends neither heartbeats nor signals', async () => {
    const calls: [number, number, number][] = Array.from({ length: 50 }, (_, i) => [i * 100, i + 1, 50]);
    const r = await report(calls, { heartbeatIntervalMs: 100, firstSignalAfterMs: 2_000 }, { isLocal: true });
    expect(r).toEqual({ beats: [], signals: [] });
  });
});
