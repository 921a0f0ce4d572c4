import { beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../src/core/trajectory.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { calledTools, evaluateExpertAndRandom, exportSft, listedEnv, rewardTotals, runEpisodeCli, scoreWithRules, toolResults, useHeldoutEpisodes } from './support/env-episodes.js';

const ENV = 'gymflow/engineering-v0';

beforeAll(() => registerBuiltinEnvs());

describe('gymflow/engineering-v0 in the CLI, collect, export, eval and reward', { timeout: 120_000 }, () => {
  const episodes = useHeldoutEpisodes(ENV, { expert: 10, random: 6 });

  it('is listed by `gymflow envs` and runs in `gymflow run-episode` with the expert and the random agent', () => {
    expect(listedEnv(ENV)).toMatchObject({ agents: ['random', 'expert'], trainTasks: 250, heldoutTasks: 60 });
    expect(runEpisodeCli(ENV, 'expert')).toMatch(/^gymflow\/engineering-v0 task=engineering-train-\d{5} agent=engineering-expert steps=\d+ success=true score=1 return=1 reason=resolved\n/);
    expect(runEpisodeCli(ENV, 'random')).toMatch(/agent=random steps=\d+ success=false/);
  });

  it("collects expert incidents and exports them as SFT records whose respond results are the commander's replies", async () => {
    const { dir, expert } = episodes();
    expect(expert.every((t) => t.outcome.success && t.task.domain === 'engineering')).toBe(true);
    const rows = await exportSft(dir, expert);
    expect(rows).toHaveLength(10);
    for (const [i, row] of rows.entries()) {
      const t = expert[i] as Trajectory;
      expect(row).toMatchObject({ env_id: ENV, domain: 'engineering', task_id: t.task.id, success: true, num_steps: t.steps.length });
      expect(row.messages.find((m) => m.role === 'user')?.content).toMatch(/^# Incident response runbook[\s\S]*# The incident commander's first message\n\n/);
      const calls = calledTools(row);
      expect(calls).toEqual(t.steps.map((s) => s.action.tool));
      expect(calls[0]).toBe('respond');
      expect(calls[calls.length - 1]).toBe('resolve');
      const replies = toolResults(row);
      expect(replies[0]).toMatch(/first alert fired|Alerts started/);
    }
  });

  it('evaluates the expert and the random agent on held-out tasks', async () => {
    const { expert, random } = await evaluateExpertAndRandom(ENV, 15);
    expect(expert.every((x) => x.success)).toBe(true);
    expect(random.filter((x) => x.success)).toEqual([]);
  });

  it('`gymflow reward score --domain engineering` scores every step with the rule layer; the expert ranks above random', async () => {
    const { dir, expert, random } = episodes();
    const out = await scoreWithRules(dir, [...expert, ...random], 'engineering');
    expect(out).toHaveLength(16);
    expect(Math.min(...rewardTotals(out, 'engineering-expert'))).toBeGreaterThan(Math.max(...rewardTotals(out, 'random')));
    const fix = (out[0] as Trajectory).steps.find((s) => ['rollback', 'restart', 'scale', 'edit_config'].includes(s.action.tool));
    expect(Object.keys(fix?.reward?.rubrics ?? {})).toEqual(expect.arrayContaining(['redundancy', 'informationUse', 'efficiency']));
    // A config fix writes a value, so the regression rule judges it: setting a key back is not an undo of the agent's own change.
    const edit = out.filter((t) => t.agent.name === 'engineering-expert').flatMap((t) => t.steps).find((s) => s.action.tool === 'edit_config');
    expect(edit?.reward?.rubrics['regression']?.score).toBe(1);
  });
});
