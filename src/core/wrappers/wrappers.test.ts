import { describe, expect, it, vi } from 'vitest';
import { CountdownEnv } from '../__fixtures__/countdown-env.js';
import { EnvClosedError, EpisodeEndedError, ResetNeededError } from '../errors.js';
import type { Action, AgentEnv, TimeStep } from '../types.js';
import { EpisodeStatistics } from './episode-statistics.js';
import { MaxSteps } from './max-steps.js';
import { OrderEnforcing } from './order-enforcing.js';
import { Recorder } from './recorder.js';
import { RewardWrapper } from './reward.js';
import { Timeout } from './timeout.js';
import { findWrapper, Wrapper } from './wrapper.js';

const dec = (by = 1): Action => ({ tool: 'decrement', params: { by } });
const peek: Action = { tool: 'peek', params: {} };
const submit: Action = { tool: 'submit', params: {} };

/** An env with no protocol checks of its own, to show what OrderEnforcing adds. */
class LaxEnv implements AgentEnv {
  domain = 'generic';
  tools = new CountdownEnv().tools;
  closes = 0;
  async reset(): Promise<TimeStep> {
    return { observation: 'start', reward: 0, terminated: false, truncated: false, info: { task: { id: 't', domain: 'generic', instruction: 'i' } } };
  }
  async step(action: Action): Promise<TimeStep> {
    const end = action.tool === 'submit';
    return { observation: 'ok', reward: 1, terminated: end, truncated: false, info: end ? { reason: 'submitted' } : {} };
  }
  async close(): Promise<void> {
    this.closes += 1;
  }
}

describe('MaxSteps', () => {
  it('truncates on the limit with reason max_steps', async () => {
    const env = new MaxSteps(new CountdownEnv(), 2);
    await env.reset({ task: 'countdown-6', seed: 0 });
    expect((await env.step(peek)).truncated).toBe(false);
    const ts = await env.step(peek);
    expect(ts).toMatchObject({ truncated: true, terminated: false, info: { reason: 'max_steps' } });
  });

  it('keeps a terminating step on the limit terminated, not truncated', async () => {
    const env = new MaxSteps(new CountdownEnv(), 2);
    await env.reset({ task: 'countdown-3', seed: 0 });
    await env.step(dec(3));
    const ts = await env.step(submit);
    expect(ts).toMatchObject({ terminated: true, truncated: false, info: { reason: 'submitted' } });
  });

  it('restarts the count on reset and rejects a bad limit', async () => {
    const env = new MaxSteps(new CountdownEnv(), 1);
    await env.reset({ seed: 0 });
    expect((await env.step(peek)).truncated).toBe(true);
    await env.reset({ seed: 0 });
    expect((await env.step(peek)).truncated).toBe(true);
    expect(() => new MaxSteps(new CountdownEnv(), 0)).toThrow(/positive integer/);
  });
});

describe('Timeout', () => {
  it('truncates after the wall-clock budget with reason timeout', async () => {
    let now = 0;
    const env = new Timeout(new CountdownEnv(), 1000, () => now);
    await env.reset({ seed: 0 });
    now = 500;
    expect((await env.step(peek)).truncated).toBe(false);
    now = 1000;
    const ts = await env.step(peek);
    expect(ts).toMatchObject({ truncated: true, terminated: false, info: { reason: 'timeout' } });
  });

  it('does not wait for a step that hangs past the deadline', async () => {
    class Hanging extends LaxEnv {
      override step(): Promise<TimeStep> {
        return new Promise(() => undefined);
      }
    }
    const env = new Timeout(new Hanging(), 30);
    await env.reset();
    const ts = await env.step(peek);
    expect(ts).toMatchObject({ truncated: true, info: { reason: 'timeout' } });
    expect(ts.observation).toContain('time limit of 30 ms');
  });

  it('waits out a budget longer than the longest timer (2^31 − 1 ms) instead of firing at once', async () => {
    vi.useFakeTimers();
    try {
      let finish: ((ts: TimeStep) => void) | undefined;
      class Slow extends LaxEnv {
        override step(): Promise<TimeStep> {
          return new Promise((resolve) => {
            finish = resolve;
          });
        }
      }
      const day = 86_400_000;
      const env = new Timeout(new Slow(), 30 * day, Date.now);
      await env.reset();
      const step = env.step(peek);
      let settled: TimeStep | undefined;
      void step.then((ts) => (settled = ts));
      // Node runs a timer of more than 2^31 − 1 ms after 1 ms; 25 days in, the step is still running.
      await vi.advanceTimersByTimeAsync(25 * day);
      expect(settled).toBeUndefined();
      finish?.({ observation: 'done', reward: 0, terminated: false, truncated: false, info: {} });
      expect(await step).toMatchObject({ observation: 'done', truncated: false });
      // A step that hangs is cut at 30 days, not before.
      const hung = env.step(peek);
      let cut: TimeStep | undefined;
      void hung.then((ts) => (cut = ts));
      await vi.advanceTimersByTimeAsync(4 * day);
      expect(cut).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1 * day);
      expect(cut).toMatchObject({ truncated: true, info: { reason: 'timeout' } });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('RewardWrapper', () => {
  it('replaces the reward and keeps the env reward in info.envReward', async () => {
    const seen: number[] = [];
    const env = new RewardWrapper(new CountdownEnv(), ({ timeStep, stepIndex }) => {
      seen.push(stepIndex);
      return timeStep.info.error ? -0.5 : timeStep.reward * 10;
    });
    await env.reset({ task: 'countdown-3', seed: 0 });
    expect((await env.step({ tool: 'nope', params: {} })).reward).toBe(-0.5);
    await env.step(dec(3));
    const ts = await env.step(submit);
    expect(ts.reward).toBe(10);
    expect(ts.info.envReward).toBe(1);
    expect(seen).toEqual([0, 1, 2]);
  });
});

describe('EpisodeStatistics', () => {
  it('adds info.episode on the final step and keeps a bounded history', async () => {
    let now = 0;
    const env = new EpisodeStatistics(new CountdownEnv(), 2, () => now);
    for (const n of [3, 4, 5]) {
      await env.reset({ task: `countdown-${n}`, seed: 0 });
      await env.step(dec(3));
      now += 2000;
      const ts = await env.step(submit);
      expect(ts.info.episode).toEqual({ r: n === 3 ? 1 : 0, l: 2, t: 2 });
    }
    expect(env.history).toHaveLength(2);
    expect(env.summary()).toEqual({ episodes: 2, meanReturn: 0, meanLength: 2 });
  });
});

describe('OrderEnforcing', () => {
  it('adds the call-order contract to an env that lacks it', async () => {
    const lax = new LaxEnv();
    const env = new OrderEnforcing(lax);
    await expect(env.step(peek)).rejects.toBeInstanceOf(ResetNeededError);
    await env.reset();
    await env.step(submit);
    await expect(env.step(peek)).rejects.toBeInstanceOf(EpisodeEndedError);
    await env.close();
    await env.close();
    expect(lax.closes).toBe(1);
    await expect(env.reset()).rejects.toBeInstanceOf(EnvClosedError);
  });
});

describe('Recorder', () => {
  it('records a valid trajectory with thoughts, tokens, errors and the outcome', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const env = new Recorder(new CountdownEnv(), { envId: 'test/countdown-v0', agent: { name: 'unit' }, now: () => (now += 5) });
    await env.reset({ task: 'countdown-3', seed: 0 });
    await env.step({ tool: 'explode', params: {} });
    await env.step(dec(3), { thought: 'all at once', tokens: { completion: [1, 2] }, logprobs: [-0.1, -0.2] });
    await env.step(submit);
    const t = env.getTrajectory({ run: 'x' });
    expect(t.task.id).toBe('countdown-3');
    expect(t.steps).toHaveLength(3);
    expect(t.steps[0]?.error?.code).toBe('unknown_tool');
    expect(t.steps[1]).toMatchObject({ thought: 'all at once', tokens: { completion: [1, 2] }, logprobs: [-0.1, -0.2], durationMs: 5 });
    expect(t.outcome).toEqual({ success: true, score: 1, terminated: true, truncated: false, reason: 'submitted' });
    expect(t.metadata).toEqual({ run: 'x' });
    expect(t.id).toMatch(/^sha256:/);
  });

  it('keeps the stated confidence of the terminating step in the outcome, and nothing when there is none', async () => {
    class Confident extends LaxEnv {
      constructor(private readonly confidence: unknown) {
        super();
      }
      override async step(action: Action): Promise<TimeStep> {
        const ts = await super.step(action);
        return ts.terminated ? { ...ts, info: { ...ts.info, success: true, confidence: this.confidence } } : ts;
      }
    }
    const run = async (confidence: unknown) => {
      const env = new Recorder(new Confident(confidence), { envId: 'test/lax-v0', agent: { name: 'unit' } });
      await env.reset();
      await env.step(submit);
      return env.getTrajectory();
    };
    const stated = await run(0.85);
    expect(stated.outcome).toEqual({ success: true, score: 1, terminated: true, truncated: false, reason: 'submitted', confidence: 0.85 });
    // Out of range or not a number: not a confidence. Without one the outcome (and so the id) is as before.
    for (const bad of [85, '0.5', undefined]) expect((await run(bad)).outcome).not.toHaveProperty('confidence');
    expect((await run(undefined)).id).not.toBe(stated.id);
  });

  it('forwards notes() through wrappers', async () => {
    class Noted extends LaxEnv {
      notes(): string[] {
        return ['2 questions with an image left out'];
      }
    }
    expect(new OrderEnforcing(new MaxSteps(new Noted(), 3)).notes()).toEqual(['2 questions with an image left out']);
    expect(new MaxSteps(new LaxEnv(), 3).notes()).toEqual([]);
  });

  it('reports an unfinished episode as incomplete', async () => {
    const env = new Recorder(new CountdownEnv(), { envId: 'test/countdown-v0', agent: { name: 'unit' } });
    await env.reset({ seed: 0 });
    await env.step(peek);
    expect(env.getTrajectory().outcome).toMatchObject({ success: false, terminated: false, truncated: false, reason: 'incomplete' });
  });
});

describe('composition', () => {
  it('wrappers compose in any order with the same observable behaviour', async () => {
    const stacks: ((e: AgentEnv) => AgentEnv)[] = [
      (e) => new OrderEnforcing(new EpisodeStatistics(new MaxSteps(new Recorder(e, { envId: 'test/countdown-v0', agent: { name: 'u' } }), 3))),
      (e) => new Recorder(new MaxSteps(new EpisodeStatistics(new OrderEnforcing(e)), 3), { envId: 'test/countdown-v0', agent: { name: 'u' } }),
      (e) => new MaxSteps(new Recorder(new OrderEnforcing(new EpisodeStatistics(e)), { envId: 'test/countdown-v0', agent: { name: 'u' } }), 3),
    ];
    const results = [];
    for (const wrap of stacks) {
      const env = wrap(new CountdownEnv());
      await env.reset({ task: 'countdown-6', seed: 3 });
      const a = await env.step(dec(1));
      const b = await env.step(dec(1));
      const c = await env.step(dec(1));
      const recorder = findWrapper(env, Recorder);
      expect(recorder).toBeDefined();
      results.push({ obs: [a.observation, b.observation, c.observation], last: { ...c, info: { reason: c.info.reason } }, steps: recorder?.getTrajectory().steps.length });
      await expect(env.step(peek)).rejects.toBeInstanceOf(EpisodeEndedError);
      expect(env instanceof Wrapper && env.unwrapped).toBeInstanceOf(CountdownEnv);
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
    expect(results[0]?.last).toMatchObject({ truncated: true, info: { reason: 'max_steps' } });
  });

  it('observing wrappers see only what lies beneath them', async () => {
    const inner = new EpisodeStatistics(new CountdownEnv());
    const env = new MaxSteps(inner, 1);
    await env.reset({ seed: 0 });
    expect((await env.step(peek)).truncated).toBe(true);
    expect(inner.history).toHaveLength(0); // the truncation happened above it
    const outer = new EpisodeStatistics(new MaxSteps(new CountdownEnv(), 1));
    await outer.reset({ seed: 0 });
    await outer.step(peek);
    expect(outer.history).toHaveLength(1);
  });
});
