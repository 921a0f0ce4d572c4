import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { collect } from '../src/hub/collect.js';
import { resolveAgent } from '../src/policy/specs.js';
import { calledTools, evaluateExpertAndRandom, exportSft, listedEnv, runEpisodeCli, toolResults } from './support/env-episodes.js';

const ENV = 'gymflow/webshop-v0';

beforeAll(() => registerBuiltinEnvs());

describe('gymflow/webshop-v0 in the CLI, collect, export and eval', { timeout: 90_000 }, () => {
  it('is listed by `gymflow envs` and runs in `gymflow run-episode` with the expert and the random agent', () => {
    expect(listedEnv(ENV)).toMatchObject({ domain: 'browser', agents: ['random', 'expert'], trainTasks: 2400, heldoutTasks: 300 });
    const expert = runEpisodeCli(ENV, 'expert');
    expect(expert).toMatch(/^gymflow\/webshop-v0 task=webshop-train-\d{5} agent=webshop-expert steps=\d+ success=true score=1 return=1 reason=purchased\n/);
    expect(expert).toMatch(/\n {2}0\. search\(\{"query":"[^"]+"\}\) -> Search results for /);
    expect(runEpisodeCli(ENV, 'random')).toMatch(/agent=random steps=\d+ success=false/);
  });

  it('collects expert episodes and exports them as SFT records with tool calls and pages', async () => {
    const { trajectories, summary } = await collect({ resolveAgent, envId: ENV, agent: 'expert', n: 6, split: 'heldout', concurrency: 2, seed: 3 });
    expect(summary).toMatchObject({ episodes: 6, successes: 6 });
    expect(trajectories.every((t) => t.outcome.reason === 'purchased' && t.task.domain === 'browser')).toBe(true);
    const rows = await exportSft(await mkdtemp(path.join(tmpdir(), 'gymflow-webshop-')), trajectories);
    expect(rows).toHaveLength(6);
    for (const [i, row] of rows.entries()) {
      const t = trajectories[i];
      expect(row).toMatchObject({ env_id: ENV, domain: 'browser', task_id: t?.task.id, success: true, num_steps: t?.steps.length, outcome_reason: 'purchased' });
      expect(JSON.parse(row.tools).map((x: { function: { name: string } }) => x.function.name)).toEqual(['search', 'open', 'select', 'next_page', 'prev_page', 'back', 'buy']);
      expect(row.messages.find((m) => m.role === 'user')?.content).toBe(t?.task.instruction);
      const calls = calledTools(row);
      expect(calls).toEqual(t?.steps.map((s) => s.action.tool));
      expect(calls?.[0]).toBe('search');
      expect(calls?.[calls.length - 1]).toBe('buy');
      // Every observation but the last (the episode is over; see conversation.ts).
      expect(toolResults(row)).toEqual(t?.steps.slice(0, -1).map((s) => s.observation));
    }
  });

  it('evaluates the expert and the random agent on held-out tasks', async () => {
    const { expert, random } = await evaluateExpertAndRandom(ENV, 24);
    expect(expert.filter((e) => e.success).length).toBeGreaterThanOrEqual(23);
    expect(random.filter((e) => e.success).length).toBeLessThanOrEqual(3);
    expect(new Set(expert.map((e) => e.taskId)).size).toBe(24);
    expect(expert.every((e) => e.taskId.startsWith('webshop-heldout-'))).toBe(true);
  });
});
