import { afterEach, describe, expect, it } from 'vitest';
import { CountdownEnv } from '../__fixtures__/countdown-env.js';
import { register, unregister } from '../registry.js';
import { makeTrajectory } from '../trajectory.js';
import { registryToolLookup, toolsFor } from './tool-lookup.js';

const ID = 'test/countdown-lookup-v0';
afterEach(() => unregister(ID));

function trajectory(envId: string) {
  const step = (index: number, tool: string) => ({ index, action: { tool, params: {} }, observation: '', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 0 });
  return makeTrajectory({
    task: { id: 't', domain: 'generic', instruction: 'i', metadata: {} },
    envId,
    agent: { name: 'a' },
    steps: [step(0, 'peek'), step(1, 'decrement'), step(2, 'peek')],
    outcome: { success: false, score: 0, terminated: false, truncated: true, reason: 'max_steps' },
    metadata: {},
  });
}

describe('registryToolLookup', () => {
  it("returns a registered env's tools and undefined for an unknown id", () => {
    register(ID, () => new CountdownEnv(), { domain: 'generic', description: 'count down' });
    const lookup = registryToolLookup();
    expect(lookup(ID)?.map((t) => t.name)).toEqual(['decrement', 'peek', 'submit']);
    expect(lookup('test/unknown-v0')).toBeUndefined();
  });

  it("reads the spec's tools of an env that cannot be made without keyword arguments", () => {
    const tools = new CountdownEnv().tools;
    register(ID, () => {
      throw new Error('needs kwargs.questions');
    }, { domain: 'generic', description: 'needs kwargs', tools });
    expect(registryToolLookup()(ID)).toBe(tools);
  });
});

describe('toolsFor', () => {
  it("uses the lookup's tools when it knows the env, else one schemaless entry per tool used", () => {
    register(ID, () => new CountdownEnv(), { domain: 'generic', description: 'count down' });
    expect(toolsFor(trajectory(ID), registryToolLookup()).map((t) => t.name)).toEqual(['decrement', 'peek', 'submit']);
    expect(toolsFor(trajectory('external/log-v0'), undefined)).toEqual([
      { name: 'peek', description: '', parameters: { type: 'object' } },
      { name: 'decrement', description: '', parameters: { type: 'object' } },
    ]);
  });
});
