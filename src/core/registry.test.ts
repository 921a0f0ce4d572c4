import { afterEach, describe, expect, it } from 'vitest';
import { CountdownEnv } from './__fixtures__/countdown-env.js';
import { RegistryError, ResetNeededError } from './errors.js';
import { isRegistered, listEnvs, make, parseEnvId, register, spec, unregister } from './registry.js';
import { findWrapper } from './wrappers/wrapper.js';
import { MaxSteps } from './wrappers/max-steps.js';
import { OrderEnforcing } from './wrappers/order-enforcing.js';

const ID = 'test/countdown-v0';

afterEach(() => {
  unregister(ID);
  unregister('test/countdown-v1');
});

describe('registry', () => {
  it('validates ids', () => {
    expect(parseEnvId('gymflow/sandbox-v0')).toEqual({ namespace: 'gymflow', name: 'sandbox', version: 0 });
    expect(parseEnvId('gymflow/text-math-v12')).toEqual({ namespace: 'gymflow', name: 'text-math', version: 12 });
    for (const bad of ['sandbox-v0', 'gymflow/sandbox', 'Gymflow/sandbox-v0', 'gymflow/sandbox-vx', '']) {
      expect(() => parseEnvId(bad)).toThrow(RegistryError);
    }
  });

  it('registers, lists, specs and makes with order enforcement and the step limit', async () => {
    expect(isRegistered(ID)).toBe(false);
    register(ID, () => new CountdownEnv(), { domain: 'generic', description: 'count down', maxEpisodeSteps: 2 });
    expect(isRegistered(ID)).toBe(true);
    expect(listEnvs().map((s) => s.id)).toContain(ID);
    expect(spec(ID)).toMatchObject({ id: ID, maxEpisodeSteps: 2, domain: 'generic' });
    const env = make(ID);
    expect(env).toBeInstanceOf(OrderEnforcing);
    expect(findWrapper(env, MaxSteps)?.maxSteps).toBe(2);
    await expect(env.step({ tool: 'peek', params: {} })).rejects.toBeInstanceOf(ResetNeededError);
    await env.reset({ seed: 1 });
    await env.step({ tool: 'peek', params: {} });
    expect((await env.step({ tool: 'peek', params: {} })).info.reason).toBe('max_steps');
  });

  it('applies overrides: step limit, no limit, and factory kwargs merged over the spec', () => {
    let seen: Record<string, unknown> = {};
    register(ID, (kw) => ((seen = kw), new CountdownEnv()), { domain: 'generic', description: 'd', maxEpisodeSteps: 5, kwargs: { a: 1, b: 2 } });
    expect(findWrapper(make(ID, { maxEpisodeSteps: 9 }), MaxSteps)?.maxSteps).toBe(9);
    expect(findWrapper(make(ID, { maxEpisodeSteps: null }), MaxSteps)).toBeUndefined();
    make(ID, { kwargs: { b: 3 } });
    expect(seen).toEqual({ a: 1, b: 3 });
    // What spec() returns cannot change what later makes get.
    expect(() => {
      (spec(ID).kwargs as Record<string, unknown>)['a'] = 99;
    }).toThrow(TypeError);
    make(ID);
    expect(seen).toEqual({ a: 1, b: 2 });
  });

  it('refuses duplicate registration unless replaced', () => {
    register(ID, () => new CountdownEnv(), { domain: 'generic', description: 'd' });
    expect(() => register(ID, () => new CountdownEnv(), { domain: 'generic', description: 'd' })).toThrow(/already registered/);
    register(ID, () => new CountdownEnv(), { domain: 'generic', description: 'replaced' }, { replace: true });
    expect(spec(ID).description).toBe('replaced');
  });

  it('names other versions or the registered ids when an id is unknown', () => {
    register('test/countdown-v1', () => new CountdownEnv(), { domain: 'generic', description: 'd' });
    expect(() => make(ID)).toThrow(/not registered; other versions: test\/countdown-v1/);
    expect(() => make('test/other-v0')).toThrow(/registered: .*test\/countdown-v1/);
    expect(() => register(ID, () => new CountdownEnv(), { domain: 'g', description: 'd', maxEpisodeSteps: 0 })).toThrow(/positive integer/);
  });
});
