import { beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../src/core/trajectory.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { calledTools, evaluateExpertAndRandom, exportSft, listedEnv, rewardTotals, runEpisodeCli, scoreWithRules, toolResults, useHeldoutEpisodes } from './support/env-episodes.js';

const ENV = 'gymflow/discussion-v0';

beforeAll(() => registerBuiltinEnvs());

describe('gymflow/discussion-v0 in the CLI, collect, export, eval and reward', { timeout: 120_000 }, () => {
  const episodes = useHeldoutEpisodes(ENV, { expert: 6, random: 6 });

  it('is listed by `gymflow envs` and runs in `gymflow run-episode` with the expert and the random agent', () => {
    expect(listedEnv(ENV)).toMatchObject({ agents: ['random', 'expert'], trainTasks: 240, heldoutTasks: 60 });
    expect(runEpisodeCli(ENV, 'expert')).toMatch(/^gymflow\/discussion-v0 task=discussion-train-\d{5} agent=discussion-expert steps=\d+ success=true score=1 return=1 reason=decided\n/);
    expect(runEpisodeCli(ENV, 'random')).toMatch(/agent=random steps=\d+ success=false/);
  });

  it('collects expert meetings and exports them as SFT records whose tool results are the members\' answers', async () => {
    const { dir, expert } = episodes();
    expect(expert.every((t) => t.outcome.success && t.task.domain === 'discussion')).toBe(true);
    const rows = await exportSft(dir, expert);
    expect(rows).toHaveLength(6);
    for (const [i, row] of rows.entries()) {
      const t = expert[i] as Trajectory;
      expect(row).toMatchObject({ env_id: ENV, domain: 'discussion', task_id: t.task.id, success: true, num_steps: t.steps.length });
      expect(row.messages.find((m) => m.role === 'user')?.content).toMatch(/^You facilitate a committee meeting\.[\s\S]*The decision rule/);
      const calls = calledTools(row);
      expect(calls).toEqual(t.steps.map((s) => s.action.tool));
      expect(calls[0]).toBe('ask_group');
      expect(calls[calls.length - 1]).toBe('decide');
      const replies = toolResults(row);
      expect(replies).toEqual(t.steps.slice(0, -1).map((s) => s.observation));
    }
  });

  it('evaluates the expert and the random agent on held-out tasks', async () => {
    const { expert, random } = await evaluateExpertAndRandom(ENV, 18);
    expect(expert.every((x) => x.success)).toBe(true);
    expect(random.filter((x) => x.success).length).toBeLessThanOrEqual(1);
    expect(new Set(expert.map((x) => x.taskId)).size).toBe(18);
  });

  it('`gymflow reward score --domain discussion` scores every step with the rule layer; the expert ranks above random', async () => {
    const { dir, expert, random } = episodes();
    const out = await scoreWithRules(dir, [...expert, ...random], 'discussion');
    expect(out).toHaveLength(12);
    expect(Math.min(...rewardTotals(out, 'discussion-expert'))).toBeGreaterThan(Math.max(...rewardTotals(out, 'random')));
    const first = (out[0] as Trajectory).steps[0];
    expect(first?.action.tool).toBe('ask_group');
    expect(Object.keys(first?.reward?.rubrics ?? {})).toEqual(expect.arrayContaining(['redundancy', 'efficiency']));
  });
});
