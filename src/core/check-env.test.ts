import { describe, expect, it } from 'vitest';
import { CountdownEnv } from './__fixtures__/countdown-env.js';
import { assertEnv, checkEnv, EnvCheckError } from './check-env.js';
import type { Action, TimeStep } from './types.js';

function failed(report: Awaited<ReturnType<typeof checkEnv>>): Record<string, string> {
  return Object.fromEntries(report.checks.filter((c) => !c.ok).map((c) => [c.name, c.message]));
}

describe('checkEnv', () => {
  it('passes a conforming environment', async () => {
    const report = await checkEnv(() => new CountdownEnv());
    expect(failed(report)).toEqual({});
    expect(report.ok).toBe(true);
    await assertEnv(() => new CountdownEnv());
  });

  it('rejects an env whose episodes are not reproducible under a seed', async () => {
    let instance = 0;
    class Unseeded extends CountdownEnv {
      private readonly salt = instance++;
      protected override async onStep(action: Action): Promise<TimeStep> {
        const ts = await super.onStep(action);
        return { ...ts, observation: `${ts.observation} #${this.salt}:${Math.random()}` };
      }
    }
    const report = await checkEnv(() => new Unseeded());
    expect(Object.keys(failed(report))).toEqual(['deterministic under a seed (same instance)', 'deterministic under a seed (fresh instance)']);
    await expect(assertEnv(() => new Unseeded())).rejects.toThrow(EnvCheckError);
  });

  it('rejects an env that throws on invalid actions, sets both flags, or has bad tool schemas', async () => {
    class Throws extends CountdownEnv {
      protected override onInvalidAction(): TimeStep {
        throw new Error('boom');
      }
    }
    expect(failed(await checkEnv(() => new Throws()))['invalid actions are observations']).toMatch(/threw Error: boom/);

    class BothFlags extends CountdownEnv {
      protected override async onStep(action: Action): Promise<TimeStep> {
        const ts = await super.onStep(action);
        return ts.terminated ? { ...ts, truncated: true } : ts;
      }
    }
    expect(failed(await checkEnv(() => new BothFlags()))['episode contract']).toMatch(/terminated and truncated are both true/);

    class BadSchema extends CountdownEnv {
      override readonly tools = [{ ...new CountdownEnv().tools[2]!, parameters: { type: 'object', properties: { x: { type: 'strin' } } } }];
    }
    expect(failed(await checkEnv(() => new BadSchema())).tools).toMatch(/invalid JSON Schema/);

    class NoSubmit extends CountdownEnv {
      override readonly tools = new CountdownEnv().tools.filter((t) => t.category !== 'submit');
    }
    expect(failed(await checkEnv(() => new NoSubmit())).tools).toMatch(/no tool has category "submit"/);
  });

  it('rejects an env that lets a finished episode go on or never ends', async () => {
    class Endless extends CountdownEnv {
      protected override async onStep(): Promise<TimeStep> {
        return { observation: 'again', reward: 0, terminated: false, truncated: false, info: {} };
      }
    }
    expect(failed(await checkEnv(() => new Endless(), { maxSteps: 10 }))['episode contract']).toMatch(/did not end within 10 steps/);

    class NoReason extends CountdownEnv {
      protected override async onStep(action: Action): Promise<TimeStep> {
        const ts = await super.onStep(action);
        return ts.terminated ? { ...ts, info: {} } : ts;
      }
    }
    expect(failed(await checkEnv(() => new NoReason()))['episode contract']).toMatch(/without info.reason/);
  });
});
