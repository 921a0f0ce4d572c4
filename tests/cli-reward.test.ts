import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTrajectory } from '../src/core/trajectory.js';
import { repoRoot } from './support/temporal.js';

function gymflow(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(repoRoot, 'bin', 'gymflow.js'), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('gymflow reward', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gymflow-reward-'));
  const runs = join(dir, 'runs.jsonl');
  const lines: string[] = [];
  for (const [agent, task] of [['expert', 'tool-train-00001'], ['random', 'tool-train-00001'], ['expert', 'tool-train-00002'], ['random', 'tool-train-00002']] as const) {
    const r = gymflow('run-episode', '--env', 'gymflow/tool-use-v0', '--agent', agent, '--seed', '1', '--task', task, '--json');
    lines.push(JSON.stringify(JSON.parse(r.stdout)));
  }
  writeFileSync(runs, `${lines.join('\n')}\n`);

  it('scores every step, keeps ids, and feeds preferences and the leaderboard', () => {
    const scored = join(dir, 'scored.jsonl');
    const r = gymflow('reward', 'score', runs, '--domain', 'tool-use', '-o', scored, '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ scored: 4, skipped: 0, judge: null });
    const out = readFileSync(scored, 'utf8').trim().split('\n').map((l, i) => parseTrajectory(JSON.parse(l), `scored.jsonl:${i + 1}`));
    expect(out.map((t) => t.id)).toEqual(lines.map((l) => (JSON.parse(l) as { id: string }).id));
    for (const t of out) {
      expect(t.reward?.layers).toHaveProperty('rules');
      for (const s of t.steps) expect(s.reward?.score).toBeGreaterThanOrEqual(0);
    }
    const expert = out.filter((t) => t.agent.name === 'tool-use-expert');
    const random = out.filter((t) => t.agent.name === 'random');
    expect([expert.length, random.length]).toEqual([2, 2]);
    expect(Math.min(...expert.map((t) => t.reward!.total))).toBeGreaterThan(Math.max(...random.map((t) => t.reward!.total)));

    const pairs = join(dir, 'pairs.jsonl');
    expect(gymflow('reward', 'preferences', scored, '-o', pairs).status).toBe(0);
    const chosen = readFileSync(pairs, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { chosenId: string }).chosenId);
    expect(chosen.sort()).toEqual(expert.map((t) => t.id).sort());

    const board = JSON.parse(gymflow('reward', 'leaderboard', scored, '--by', 'agent', '--json').stdout) as { key: string; n: number }[];
    expect(board.map((row) => [row.key, row.n])).toEqual([['tool-use-expert', 2], ['random', 2]]);
  });

  it('refuses bad input with a clear message and never calls a judge unless asked', () => {
    const unknown = gymflow('reward', 'score', runs, '--domain', 'astrology', '-o', join(dir, 'x.jsonl'));
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/unknown domain profile 'astrology'; known: .*coding/);
    const noProvider = gymflow('reward', 'score', runs, '--domain', 'coding', '--model', 'm', '-o', join(dir, 'x.jsonl'));
    expect(noProvider.stderr).toMatch(/without a provider: add --judge anthropic\|openai/);
    const noKey = spawnSync(process.execPath, [join(repoRoot, 'bin', 'gymflow.js'), 'reward', 'score', runs, '--domain', 'coding', '--judge', 'anthropic', '--model', 'claude-x', '-o', join(dir, 'x.jsonl')], {
      encoding: 'utf8',
      env: { ...process.env, ANTHROPIC_API_KEY: '' },
    });
    expect(noKey.status).toBe(1);
    expect(noKey.stderr).toMatch(/ANTHROPIC_API_KEY/);
  });
});
