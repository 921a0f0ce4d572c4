import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { collect } from '../src/hub/collect.js';
import { resolveAgent } from '../src/policy/specs.js';
import { calledTools, evaluateExpertAndRandom, exportSft, listedEnv, runEpisodeCli, toolResults } from './support/env-episodes.js';

const ENV = 'gymflow/household-v0';

beforeAll(() => registerBuiltinEnvs());

describe('gymflow/household-v0 in the CLI, collect, export and eval', { timeout: 90_000 }, () => {
  it('is listed by `gymflow envs` and runs in `gymflow run-episode` with the expert and the random agent', () => {
    expect(listedEnv(ENV)).toMatchObject({ agents: ['random', 'expert', 'planner'], heldoutTasks: 240 });
    expect(runEpisodeCli(ENV, 'expert')).toMatch(/^gymflow\/household-v0 task=household-train-\d{5} agent=household-expert steps=\d+ success=true score=1 return=1 reason=goal_reached\n/);
    expect(runEpisodeCli(ENV, 'random')).toMatch(/agent=random steps=\d+ success=false/);
  });

  it('collects expert episodes and exports them as SFT records with tool calls and observations', async () => {
    const { trajectories, summary } = await collect({ resolveAgent, envId: ENV, agent: 'expert', n: 6, split: 'heldout', concurrency: 2, seed: 3 });
    expect(summary).toMatchObject({ episodes: 6, successes: 6 });
    expect(trajectories.every((t) => t.outcome.reason === 'goal_reached' && t.task.domain === 'household')).toBe(true);
    const rows = await exportSft(await mkdtemp(path.join(tmpdir(), 'gymflow-household-')), trajectories);
    expect(rows).toHaveLength(6);
    for (const [i, row] of rows.entries()) {
      const t = trajectories[i];
      expect(row).toMatchObject({ env_id: ENV, domain: 'household', task_id: t?.task.id, success: true, num_steps: t?.steps.length, outcome_reason: 'goal_reached' });
      expect(JSON.parse(row.tools).map((x: { function: { name: string } }) => x.function.name)).toContain('put');
      expect(row.messages.find((m) => m.role === 'user')?.content).toContain('Your task is to: ');
      const calls = calledTools(row);
      expect(calls).toEqual(t?.steps.map((s) => s.action.tool));
      // Every observation but the last (the episode is over; see conversation.ts).
      expect(toolResults(row)).toEqual(t?.steps.slice(0, -1).map((s) => s.observation));
      expect(row.messages.find((m) => m.role === 'user')?.content).toMatch(/^You are in the middle of a house\. The kitchen has a /);
    }
  });

  it('evaluates the expert and the random agent on held-out tasks', async () => {
    const { expert, random } = await evaluateExpertAndRandom(ENV, 24);
    expect(expert.every((e) => e.success)).toBe(true);
    expect(random.filter((e) => e.success).length).toBeLessThanOrEqual(3);
    expect(new Set(expert.map((e) => e.taskId)).size).toBe(24);
  });
});
