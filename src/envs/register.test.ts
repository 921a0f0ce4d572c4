import { describe, expect, it } from 'vitest';
import { listEnvs, make, spec } from '../core/registry.js';
import { isDone } from '../core/types.js';
import { BUILTIN_ENV_IDS, registerBuiltinEnvs } from './register.js';

describe('registerBuiltinEnvs', () => {
  it('registers both environments with their domains, limits and experts, idempotently', () => {
    registerBuiltinEnvs();
    registerBuiltinEnvs();
    const ids = listEnvs().map((s) => s.id);
    for (const id of BUILTIN_ENV_IDS) expect(ids.filter((x) => x === id)).toHaveLength(1);
    expect(spec('gymflow/text-math-v0')).toMatchObject({ domain: 'math', maxEpisodeSteps: 10 });
    expect(spec('gymflow/tool-use-v0')).toMatchObject({ domain: 'tool-use', maxEpisodeSteps: 20 });
    expect(spec('gymflow/tool-use-python-v0')).toMatchObject({ domain: 'tool-use-python', maxEpisodeSteps: 20 });
    expect(spec('gymflow/household-v0')).toMatchObject({ domain: 'household', maxEpisodeSteps: 50 });
    expect(spec('gymflow/webshop-v0')).toMatchObject({ domain: 'browser', maxEpisodeSteps: 15 });
    for (const id of BUILTIN_ENV_IDS) expect(spec(id).agents?.expert?.({}).info.name).toMatch(/expert/);
  });

  it('makes environments that truncate at the step limit with reason max_steps', async () => {
    registerBuiltinEnvs();
    const env = make('gymflow/text-math-v0');
    await env.reset({ seed: 5 });
    let ts = await env.step({ tool: 'think', params: { thought: '…' } });
    let steps = 1;
    while (!isDone(ts)) {
      ts = await env.step({ tool: 'think', params: { thought: '…' } });
      steps += 1;
    }
    expect(steps).toBe(10);
    expect(ts).toMatchObject({ terminated: false, truncated: true, info: { reason: 'max_steps' } });
    await env.close();
  });

  it('passes tool-use kwargs through make', () => {
    registerBuiltinEnvs();
    expect(() => make('gymflow/tool-use-v0', { kwargs: { invalidCallPenalty: 5 } })).toThrow(/^gymflow\/tool-use-v0: invalid options/);
    expect(() => make('gymflow/tool-use-randomized-v0', { kwargs: { invalidCallPenalty: 5 } })).toThrow(/^gymflow\/tool-use-randomized-v0: invalid options/);
    expect(() => make('gymflow/tool-use-python-v0', { kwargs: { invalidCallPenalty: 5 } })).toThrow(/^gymflow\/tool-use-python-v0: invalid options/);
  });

  it('passes household kwargs through make', async () => {
    registerBuiltinEnvs();
    expect(() => make('gymflow/household-v0', { kwargs: { admissible: true } })).toThrow(/^gymflow\/household-v0: invalid options/);
    const env = make('gymflow/household-v0', { kwargs: { admissibleActions: true } });
    expect((await env.reset({ seed: 1 })).info.admissible).toContainEqual({ tool: 'look', params: {} });
    await env.close();
  });

  it('refuses options text-math does not have, instead of ignoring them', () => {
    registerBuiltinEnvs();
    expect(() => make('gymflow/text-math-v0', { kwargs: { bogus: 1 } })).toThrow("gymflow/text-math-v0: takes no options, got 'bogus'");
  });

  it('quotes a long unreadable text-math answer cut short, not whole', async () => {
    registerBuiltinEnvs();
    const env = make('gymflow/text-math-v0');
    await env.reset({ seed: 1 });
    const ts = await env.step({ tool: 'submit', params: { answer: 'x'.repeat(100_000) } });
    expect(ts.observation).toBe(`Incorrect: could not read '${'x'.repeat(64)}… (100000 characters)' as a number (expected an integer like 42 or a reduced fraction like 3/4).`);
    await env.close();
  });
});
