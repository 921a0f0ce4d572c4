import { beforeAll, describe, expect, it } from 'vitest';
import { make } from '../core/registry.js';
import { runEpisode } from '../core/rollout.js';
import { ToolValidator } from '../core/tool-validator.js';
import type { ToolSpec } from '../core/types.js';
import { registerBuiltinEnvs } from '../envs/register.js';
import { RandomAgent } from './random.js';

beforeAll(() => registerBuiltinEnvs());

describe('RandomAgent params', () => {
  it('produces valid params for required fields when not breaking them on purpose', async () => {
    const tool: ToolSpec = {
      name: 't',
      description: '',
      category: 'execute',
      parameters: {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'integer', minimum: 0, maximum: 5 }, c: { type: 'boolean' }, d: { enum: ['x', 'y'] } },
        required: ['a', 'b'],
        additionalProperties: false,
      },
    };
    const validator = new ToolValidator([tool]);
    const agent = new RandomAgent({ seed: 3, invalidRate: 0 });
    for (let i = 0; i < 100; i++) {
      const { action } = await agent.act({ task: { id: 't', domain: 'generic', instruction: '' }, tools: [tool], observation: '', history: [], stepIndex: i });
      expect(validator.check(action)).toBeUndefined();
    }
  });
});

describe('RandomAgent', () => {
  it('never crashes an environment, mostly fails, and sometimes acts invalidly', async () => {
    // The in-process environments; the Docker sandbox has its own abuse suite (tests/sandbox-abuse.test.ts).
    for (const id of ['gymflow/text-math-v0', 'gymflow/tool-use-v0']) {
      const env = make(id);
      let successes = 0;
      let invalid = 0;
      const episodes = 40;
      for (let seed = 0; seed < episodes; seed++) {
        const t = await runEpisode(env, new RandomAgent({ seed }), { envId: id, seed });
        expect(t.outcome.terminated || t.outcome.truncated).toBe(true);
        if (t.outcome.success) successes += 1;
        invalid += t.steps.filter((s) => s.error).length;
      }
      expect(successes / episodes).toBeLessThan(0.2);
      expect(invalid).toBeGreaterThan(0);
      await env.close();
    }
  });

  it('replays an episode exactly for the same seeds', async () => {
    const id = 'gymflow/tool-use-v0';
    const run = async (): Promise<unknown> => {
      const t = await runEpisode(make(id), new RandomAgent({ seed: 11 }), { envId: id, seed: 11 });
      return t.steps.map((s) => [s.action, s.observation, s.envReward]);
    };
    expect(await run()).toEqual(await run());
  });
});
