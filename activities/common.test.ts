import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, GymflowError } from '../src/core/errors.js';
import { keepAlive, PROGRESS_HISTORY_BUDGET, progressReporter, progressSignalInterval, withFailureMapping, type ProgressReporterOptions } from './common.js';
import { defined } from '../src/core/defined.js';

interface Reported {
  beats: unknown[];
  signals: { done: number; total: number; note?: string; at: number }[];
  describes: number;
}

/** What the mock server answers to `describe`: a history length, or a failure. */
interface Server {
  historyLength?: (at: number) => number;
  describeFails?: boolean;
}

/**
 * Runs `calls` ([milliseconds since the start, done, total]) through a reporter inside an activity context
 * whose heartbeats and progress signals are recorded (the client only records the signal).
 */
async function report(calls: readonly [number, number, number][], options?: ProgressReporterOptions, info: { isLocal?: boolean } = {}, server: Server = {}): Promise<Reported> {
  const out: Reported = { beats: [], signals: [], describes: 0 };
  const start = Date.now();
  const client = {
    withAbortSignal: <T>(_signal: AbortSignal, fn: () => T): T => fn(),
    workflow: {
      getHandle: () => ({
        describe: async () => {
          out.describes++;
          if (server.describeFails) throw new Error('describe refused');
          return { historyLength: server.historyLength?.(Date.now() - start) ?? 10 };
        },
        signal: async (_signal: unknown, progress: { done: number; total: number; note?: string }) => {
          out.signals.push({ done: progress.done, total: progress.total, at: Date.now() - start, ...defined({ note: progress.note }) });
        },
      }),
    },
  } as unknown as Client;
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'w', runId: 'r' }, ...info }, { client });
  env.on('heartbeat', (details: unknown) => out.beats.push(details));
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
    expect(r).toEqual({ beats: [], signals: [], describes: 0 });
  });

  it('signals less often the longer an activity runs, so a week of training sends ~1,300 signals', async () => {
    expect([0, 100_000, 200_000, 3_600_000, 30_000_000, 7 * 86_400_000].map(progressSignalInterval)).toEqual([2_000, 2_000, 4_000, 72_000, 600_000, 600_000]);
    // A unit every 10 s for 7 days (60,480 units).
    const units = 7 * 8_640;
    const calls: [number, number, number][] = Array.from({ length: units }, (_, i) => [i * 10_000, i + 1, units]);
    const r = await report(calls, { heartbeatIntervalMs: 1_000 });
    expect(r.signals.length).toBeGreaterThan(1_000);
    expect(r.signals.length).toBeLessThan(1_400);
    // every gap is at least the interval its signal set (units come every 10 s)
    for (let k = 1; k < r.signals.length - 1; k++) {
      const prev = r.signals[k - 1] as { at: number };
      expect((r.signals[k] as { at: number }).at - prev.at).toBeGreaterThanOrEqual(progressSignalInterval(prev.at));
    }
    expect(r.signals.at(-1)?.done).toBe(units);
    // the history length is read at most once a minute
    expect(r.describes).toBeLessThanOrEqual(7 * 1_440 + 1);
  });

  it('stops signalling once the run\'s history passed the budget, with a last signal that says so', async () => {
    const calls: [number, number, number][] = Array.from({ length: 600 }, (_, i) => [i * 1_000, i + 1, 600]);
    // the history passes the budget 3 minutes in
    const r = await report(calls, { heartbeatIntervalMs: 100 }, {}, { historyLength: (at) => (at < 180_000 ? 100 : PROGRESS_HISTORY_BUDGET) });
    const last = r.signals.at(-1) as { at: number; note?: string };
    expect(last.note).toMatch(/^progress signals stopped: the run's history has 8000 events/);
    expect(last.at).toBeGreaterThanOrEqual(180_000);
    expect(last.at).toBeLessThan(180_000 + 60_000 + 4_000);
    expect(r.signals.filter((s) => s.note !== undefined)).toHaveLength(1);
    // heartbeats go on to the end
    expect(r.beats.at(-1)).toEqual({ done: 600, total: 600 });
  });

  it('sends no last signal when the history is already well past the budget (other activities said so)', async () => {
    const calls: [number, number, number][] = Array.from({ length: 100 }, (_, i) => [i * 1_000, i + 1, 100]);
    const r = await report(calls, { heartbeatIntervalMs: 100 }, {}, { historyLength: () => PROGRESS_HISTORY_BUDGET + 1_000 });
    expect(r.signals).toEqual([]);
    expect(r.describes).toBe(1);
  });

  it('signals when the history length cannot be read', async () => {
    const r = await report(
      [
        [0, 1, 3],
        [2_100, 2, 3],
        [2_200, 3, 3],
      ],
      undefined,
      {},
      { describeFails: true },
    );
    expect(r.signals.map((s) => s.done)).toEqual([1, 2, 3]);
  });
});

describe('withFailureMapping', () => {
  async function failureOf(err: Error): Promise<ApplicationFailure> {
    const thrown = await withFailureMapping(() => Promise.reject(err)).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    return thrown as ApplicationFailure;
  }

  it('fails a gymflow error for good when no retry can fix its code (src/loop/failures.ts), retryably otherwise', async () => {
    expect(await failureOf(new ConfigError('train.lr: expected a number'))).toMatchObject({ type: 'CONFIG_ERROR', nonRetryable: true, message: 'train.lr: expected a number' });
    expect(await failureOf(new GymflowError('DATA_ERROR', 'no records'))).toMatchObject({ type: 'DATA_ERROR', nonRetryable: true });
    expect(await failureOf(new GymflowError('STORE_ERROR', 'disk full'))).toMatchObject({ type: 'STORE_ERROR', nonRetryable: false });
  });

  it('passes other errors through', async () => {
    const plain = new Error('boom');
    await expect(withFailureMapping(() => Promise.reject(plain))).rejects.toBe(plain);
  });
});

describe('keepAlive', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('heartbeats the latest details every quarter of the heartbeat timeout until stopped', async () => {
    vi.useFakeTimers();
    const beats: unknown[] = [];
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 8_000 });
    env.on('heartbeat', (details: unknown) => beats.push(details));
    await env.run(async () => {
      let done = 0;
      const stop = keepAlive(() => ({ done }));
      vi.advanceTimersByTime(2_000);
      done = 3;
      vi.advanceTimersByTime(4_000);
      stop();
      vi.advanceTimersByTime(10_000);
    });
    expect(beats).toEqual([{ done: 0 }, { done: 3 }, { done: 3 }]);
  });

  it('does nothing in a local activity or without a heartbeat timeout', async () => {
    vi.useFakeTimers();
    for (const info of [{ heartbeatTimeoutMs: 8_000, isLocal: true }, {}]) {
      const beats: unknown[] = [];
      const env = new MockActivityEnvironment(info);
      env.on('heartbeat', (details: unknown) => beats.push(details));
      await env.run(async () => {
        const stop = keepAlive(() => 'x');
        vi.advanceTimersByTime(60_000);
        stop();
      });
      expect(beats).toEqual([]);
    }
  });
});
