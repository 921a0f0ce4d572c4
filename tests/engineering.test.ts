import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ToolLookup } from '../src/core/chat/tool-lookup.js';
import { make } from '../src/core/registry.js';
import { parseTrajectory, type Trajectory } from '../src/core/trajectory.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { evaluate } from '../src/eval/evaluate.js';
import { collect } from '../src/hub/collect.js';
import { exportDataset } from '../src/hub/export/export.js';
import { SftRecordSchema } from '../src/hub/export/schemas.js';
import { resolveAgent } from '../src/policy/specs.js';
import { PACKAGE_ROOT } from './support/temporal.js';

const ENV = 'gymflow/engineering-v0';

const tools: ToolLookup = (envId) => {
  const env = make(envId);
  const t = env.tools;
  void env.close();
  return t;
};

beforeAll(() => registerBuiltinEnvs());

function gymflow(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'gymflow.js'), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('gymflow/engineering-v0 in the CLI, collect, export, eval and reward', { timeout: 120_000 }, () => {
  let dir = '';
  let expert: Trajectory[] = [];
  let random: Trajectory[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gymflow-engineering-'));
    expert = (await collect({ resolveAgent, envId: ENV, agent: 'expert', n: 10, split: 'heldout', concurrency: 2, seed: 3 })).trajectories;
    random = (await collect({ resolveAgent, envId: ENV, agent: 'random', n: 6, split: 'heldout', concurrency: 2, seed: 3 })).trajectories;
  });

  it('is listed by `gymflow envs` and runs in `gymflow run-episode` with the expert and the random agent', () => {
    const envs = JSON.parse(gymflow('envs', '--json').stdout) as { id: string; agents: string[]; trainTasks: number; heldoutTasks: number }[];
    expect(envs.find((e) => e.id === ENV)).toMatchObject({ agents: ['random', 'expert'], trainTasks: 250, heldoutTasks: 60 });
    const run = gymflow('run-episode', '--env', ENV, '--agent', 'expert', '--seed', '3');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^gymflow\/engineering-v0 task=engineering-train-\d{5} agent=engineering-expert steps=\d+ success=true score=1 return=1 reason=resolved\n/);
    const rand = gymflow('run-episode', '--env', ENV, '--agent', 'random', '--seed', '3');
    expect(rand.status).toBe(0);
    expect(rand.stdout).toMatch(/agent=random steps=\d+ success=false/);
  });

  it("collects expert incidents and exports them as SFT records whose respond results are the commander's replies", async () => {
    expect(expert.every((t) => t.outcome.success && t.task.domain === 'engineering')).toBe(true);
    const out = path.join(dir, 'sft.jsonl');
    expect((await exportDataset({ format: 'sft', trajectories: expert, out, tools })).records).toBe(10);
    const rows = (await readFile(out, 'utf8')).trim().split('\n').map((line) => SftRecordSchema.parse(JSON.parse(line)));
    for (const [i, row] of rows.entries()) {
      const t = expert[i] as Trajectory;
      expect(row).toMatchObject({ env_id: ENV, domain: 'engineering', task_id: t.task.id, success: true, num_steps: t.steps.length });
      expect(row.messages.find((m) => m.role === 'user')?.content).toMatch(/^# Incident response runbook[\s\S]*# The incident commander's first message\n\n/);
      const calls = row.messages.filter((m) => m.role === 'assistant').map((m) => m.tool_calls?.[0]?.function.name);
      expect(calls).toEqual(t.steps.map((s) => s.action.tool));
      expect(calls[0]).toBe('respond');
      expect(calls[calls.length - 1]).toBe('resolve');
      const replies = row.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      expect(replies[0]).toMatch(/first alert fired|Alerts started/);
    }
  });

  it('evaluates the expert and the random agent on held-out tasks', async () => {
    const e = await evaluate({ envId: ENV, agent: 'expert', resolveAgent, n: 15, seed: 1 });
    const r = await evaluate({ envId: ENV, agent: 'random', resolveAgent, n: 15, seed: 1 });
    expect(e.episodes.every((x) => x.success)).toBe(true);
    expect(r.episodes.filter((x) => x.success)).toEqual([]);
  });

  it('`gymflow reward score --domain engineering` scores every step with the rule layer; the expert ranks above random', async () => {
    const runs = path.join(dir, 'runs.jsonl');
    await writeFile(runs, [...expert, ...random].map((t) => JSON.stringify(t)).join('\n') + '\n');
    const scored = path.join(dir, 'scored.jsonl');
    const r = gymflow('reward', 'score', runs, '--domain', 'engineering', '-o', scored, '--json');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ scored: 16, skipped: 0, judge: null });
    const out = (await readFile(scored, 'utf8')).trim().split('\n').map((l, i) => parseTrajectory(JSON.parse(l), `scored.jsonl:${i + 1}`));
    for (const t of out) {
      expect(t.reward?.layers).toHaveProperty('rules');
      for (const s of t.steps) expect(s.reward?.score).toBeGreaterThanOrEqual(0);
    }
    const totals = (name: string): number[] => out.filter((t) => t.agent.name === name).map((t) => t.reward?.total ?? 0);
    expect(Math.min(...totals('engineering-expert'))).toBeGreaterThan(Math.max(...totals('random')));
    const fix = (out[0] as Trajectory).steps.find((s) => ['rollback', 'restart', 'scale', 'edit_config'].includes(s.action.tool));
    expect(Object.keys(fix?.reward?.rubrics ?? {})).toEqual(expect.arrayContaining(['redundancy', 'informationUse', 'efficiency']));
    // A config fix writes a value, so the regression rule judges it: setting a key back is not an undo of the agent's own change.
    const edit = out.filter((t) => t.agent.name === 'engineering-expert').flatMap((t) => t.steps).find((s) => s.action.tool === 'edit_config');
    expect(edit?.reward?.rubrics['regression']?.score).toBe(1);
  });
});
