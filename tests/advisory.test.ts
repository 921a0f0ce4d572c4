import { beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../src/core/trajectory.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { calledTools, evaluateExpertAndRandom, exportSft, listedEnv, rewardTotals, runEpisodeCli, scoreWithRules, toolResults, useHeldoutEpisodes } from './support/env-episodes.js';

const ENV = 'gymflow/advisory-v0';

beforeAll(() => registerBuiltinEnvs());

describe('gymflow/advisory-v0 in the CLI, collect, export, eval and reward', { timeout: 120_000 }, () => {
  const episodes = useHeldoutEpisodes(ENV, { expert: 6, random: 6 });

  it('is listed by `gymflow envs` and runs in `gymflow run-episode` with the expert and the random agent', () => {
    expect(listedEnv(ENV)).toMatchObject({ agents: ['random', 'expert'], trainTasks: 300, heldoutTasks: 60 });
    expect(runEpisodeCli(ENV, 'expert')).toMatch(/^gymflow\/advisory-v0 task=advisory-train-\d{5} agent=advisory-expert steps=14 success=true score=1 return=1 reason=recommended\n/);
    expect(runEpisodeCli(ENV, 'random')).toMatch(/agent=random steps=\d+ success=false/);
  });

  it('collects expert conversations and exports them as SFT records whose tool results are the client\'s replies and the searches', async () => {
    const { dir, expert } = episodes();
    expect(expert.every((t) => t.outcome.success && t.task.domain === 'advisory')).toBe(true);
    const rows = await exportSft(dir, expert);
    expect(rows).toHaveLength(6);
    for (const [i, row] of rows.entries()) {
      const t = expert[i] as Trajectory;
      expect(row).toMatchObject({ env_id: ENV, domain: 'advisory', task_id: t.task.id, success: true, num_steps: 14 });
      expect(row.messages.find((m) => m.role === 'user')?.content).toMatch(/^# Travel advisory brief[\s\S]*# The client's first message\n\nH/);
      const calls = calledTools(row);
      expect(calls).toEqual([...Array(7).fill('respond'), 'search_flights', 'search_flights', 'search_hotels', 'search_activities', 'price_plan', 'respond', 'recommend']);
      const replies = toolResults(row);
      expect(replies[0]).toMatch(/^I('m| will|'ll be) (flying|leaving) from /);
    }
  });

  it('evaluates the expert and the random agent on held-out tasks', async () => {
    const { expert, random } = await evaluateExpertAndRandom(ENV, 12);
    expect(expert.every((x) => x.success)).toBe(true);
    expect(random.filter((x) => x.success)).toEqual([]);
  });

  it('`gymflow reward score --domain advisory` scores every step with the rule layer; the expert ranks above random', async () => {
    const { dir, expert, random } = episodes();
    const out = await scoreWithRules(dir, [...expert, ...random], 'advisory');
    expect(out).toHaveLength(12);
    expect(Math.min(...rewardTotals(out, 'advisory-expert'))).toBeGreaterThan(Math.max(...rewardTotals(out, 'random')));
    const first = (out[0] as Trajectory).steps[0];
    expect(first?.action.tool).toBe('respond');
    expect(Object.keys(first?.reward?.rubrics ?? {})).toEqual(expect.arrayContaining(['redundancy', 'efficiency']));
  });
});
