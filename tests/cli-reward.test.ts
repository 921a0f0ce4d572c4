import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTrajectory } from '../src/core/trajectory.js';
import { LoopbackApi, openaiError } from '../src/reward/judge/__fixtures__/loopback-api.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { gymflowSync } from './support/cli.js';

const gymflow = gymflowSync;

// Each test runs the CLI several times (a few seconds each when the CI machine's two cores are busy): the longest
// took 55 s on a busy machine (of 90 s then), hence 240 s.
describe('gymflow reward', { timeout: 240_000 }, () => {
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
    // Scoring threads (the built score-worker.js, started as it is) write the same file.
    const threaded = join(dir, 'scored-threads.jsonl');
    expect(gymflow('reward', 'score', runs, '--domain', 'tool-use', '-o', threaded, '--workers', '2').status).toBe(0);
    expect(readFileSync(threaded, 'utf8')).toBe(readFileSync(scored, 'utf8'));

    const pairs = join(dir, 'pairs.jsonl');
    expect(gymflow('reward', 'preferences', scored, '-o', pairs).status).toBe(0);
    const chosen = readFileSync(pairs, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { chosenId: string }).chosenId);
    expect(chosen.sort()).toEqual(expert.map((t) => t.id).sort());

    const board = JSON.parse(gymflow('reward', 'leaderboard', scored, '--by', 'agent', '--json').stdout) as { key: string; n: number }[];
    expect(board.map((row) => [row.key, row.n])).toEqual([['tool-use-expert', 2], ['random', 2]]);
    // A group of one trajectory prints no interval; groups of more do.
    const single = gymflow('reward', 'leaderboard', scored, '--by', 'model').stdout;
    expect(single).not.toMatch(/\[—\]/);
    writeFileSync(join(dir, 'one.jsonl'), `${readFileSync(scored, 'utf8').split('\n')[0]}\n`);
    expect(gymflow('reward', 'leaderboard', join(dir, 'one.jsonl')).stdout).toMatch(/ 1 +\d(\.\d+)? \[—\] /);
  });

  it('refuses bad input with a clear message and never calls a judge unless asked', () => {
    const unknown = gymflow('reward', 'score', runs, '--domain', 'astrology', '-o', join(dir, 'x.jsonl'));
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/unknown domain profile 'astrology'; known: .*coding/);
    const noProvider = gymflow('reward', 'score', runs, '--domain', 'coding', '--model', 'm', '-o', join(dir, 'x.jsonl'));
    expect(noProvider.stderr).toMatch(/without a provider: add --judge anthropic\|openai/);
    const noKey = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'gymflow.js'), 'reward', 'score', runs, '--domain', 'coding', '--judge', 'anthropic', '--model', 'claude-x', '-o', join(dir, 'x.jsonl')], {
      encoding: 'utf8',
      env: { ...process.env, ANTHROPIC_API_KEY: '' },
    });
    expect(noKey.status).toBe(1);
    expect(noKey.stderr).toMatch(/ANTHROPIC_API_KEY/);
    // Refused before any judge call or output: the judge's calls are I/O, which threads would not speed up.
    const judgeThreads = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'gymflow.js'), 'reward', 'score', runs, '--domain', 'coding', '--judge', 'openai', '--model', 'm', '--judge-base-url', 'http://127.0.0.1:9/v1', '--workers', '2', '-o', join(dir, 'x.jsonl')], {
      encoding: 'utf8',
      env: { ...process.env, OPENAI_API_KEY: 'sk-test' },
    });
    expect(judgeThreads.status).toBe(1);
    expect(judgeThreads.stderr).toMatch(/workers: a judge scores in one thread .*raise concurrency/);
    expect(gymflow('reward', 'score', runs, '--domain', 'coding', '--workers', '-1', '-o', join(dir, 'x.jsonl')).stderr).toMatch(/expected 0 or a positive integer, got '-1'/);
    expect(existsSync(join(dir, 'x.jsonl'))).toBe(false);
  });

  it('reads what it can of a damaged scored file, never writes over its input, and writes scores to stdout', () => {
    const scored = join(dir, 'scored-2.jsonl');
    expect(gymflow('reward', 'score', runs, '--domain', 'tool-use', '-o', scored).status).toBe(0);
    const good = readFileSync(scored, 'utf8').trim().split('\n');
    // A BOM, a cut line and a line whose id is not its content's: the other three lines still count.
    const forged = { ...(JSON.parse(good[3] as string) as object), id: (JSON.parse(good[0] as string) as { id: string }).id };
    const damaged = join(dir, 'damaged.jsonl');
    writeFileSync(damaged, `\uFEFF${good[0]}\n${good[1]!.slice(0, 50)}\n${good[2]}\n${JSON.stringify(forged)}\n${good[1]}\n`);
    const board = gymflow('reward', 'leaderboard', damaged, '--by', 'agent', '--json');
    expect(board.status).toBe(1);
    expect((JSON.parse(board.stdout) as { n: number }[]).reduce((a, r) => a + r.n, 0)).toBe(3);
    expect(board.stderr).toContain(`${damaged}:2 $: invalid JSON`);
    expect(board.stderr).toContain(`${damaged}:4 $.id: does not match the trajectory's content`);

    const before = readFileSync(scored, 'utf8');
    const self = gymflow('reward', 'preferences', scored, '-o', scored);
    expect([self.status, self.stderr]).toEqual([1, expect.stringMatching(/-o .*scored-2\.jsonl: is the input/)]);
    expect(readFileSync(scored, 'utf8')).toBe(before);

    // Scoring the damaged file in place would drop its bad lines for good: it is left as it was.
    const damagedText = readFileSync(damaged, 'utf8');
    const inPlace = gymflow('reward', 'score', damaged, '--domain', 'tool-use', '-o', damaged);
    expect(inPlace.status).toBe(1);
    expect(inPlace.stderr).toContain(`${damaged}:2 $: invalid JSON`);
    expect(inPlace.stderr).toMatch(/left .*damaged\.jsonl unchanged: scoring it in place would drop its 2 invalid line\(s\)/);
    expect(readFileSync(damaged, 'utf8')).toBe(damagedText);

    const piped = gymflow('reward', 'score', runs, '--domain', 'tool-use', '-o', '-');
    expect(piped.status).toBe(0);
    expect(piped.stdout).toBe(before);
    expect(piped.stderr).toMatch(/^scored 4 trajectories into stdout; skipped 0$/m);
  });

  it('replaces an earlier output only with --force (scoring in place needs none), before any judge call', async () => {
    const scored = join(dir, 'scored-4.jsonl');
    expect(gymflow('reward', 'score', runs, '--domain', 'tool-use', '-o', scored).status).toBe(0);
    const kept = readFileSync(scored, 'utf8');
    const message = (file: string): string => `gymflow: output ${file} already exists (pass --force to replace it, or choose another path)`;
    // A judge that would fail every call: the refusal comes first, so it is never asked.
    let calls = 0;
    const api = await LoopbackApi.start(() => {
      calls++;
      return { status: 401, body: openaiError('bad key', 'authentication_error') };
    });
    try {
      const judged = await run([join(PACKAGE_ROOT, 'bin', 'gymflow.js'), 'reward', 'score', runs, '--domain', 'tool-use', '--judge', 'openai', '--model', 'm', '--judge-base-url', `${api.url}/v1`, '-o', scored], { OPENAI_API_KEY: 'sk-test' });
      expect([judged.code, judged.stderr.trim()]).toEqual([1, message(scored)]);
      expect(calls).toBe(0);
    } finally {
      await api.close();
    }
    expect(readFileSync(scored, 'utf8')).toBe(kept);
    const other = join(dir, 'other-runs.jsonl');
    writeFileSync(other, `${readFileSync(runs, 'utf8').split('\n')[0]}\n`);
    expect(gymflow('reward', 'score', other, '--domain', 'tool-use', '-o', scored, '--force').status).toBe(0);
    expect(readFileSync(scored, 'utf8').trim().split('\n')).toHaveLength(1);
    // In place, as documented: the input itself is the output it names.
    const copy = join(dir, 'in-place.jsonl');
    writeFileSync(copy, readFileSync(runs, 'utf8'));
    expect(gymflow('reward', 'score', copy, '--domain', 'tool-use', '-o', copy).status).toBe(0);
    expect(readFileSync(copy, 'utf8')).toBe(kept);

    // preferences and calibrate: the same rule.
    const pairs = join(dir, 'pairs-4.jsonl');
    writeFileSync(pairs, 'earlier pairs\n');
    const prefs = gymflow('reward', 'preferences', copy, '-o', pairs);
    expect([prefs.status, prefs.stderr.trim()]).toEqual([1, message(pairs)]);
    expect(readFileSync(pairs, 'utf8')).toBe('earlier pairs\n');
    expect(gymflow('reward', 'preferences', copy, '-o', pairs, '--force').status).toBe(0);
    expect(readFileSync(pairs, 'utf8')).not.toBe('earlier pairs\n');
    const labels = join(dir, 'labels-4.jsonl');
    const first = JSON.parse(kept.split('\n')[0] as string) as { id: string };
    const second = JSON.parse(kept.split('\n')[1] as string) as { id: string };
    writeFileSync(labels, `${JSON.stringify({ trajectoryId: first.id, score: 1 })}\n${JSON.stringify({ trajectoryId: second.id, score: 0 })}\n`);
    const cal = join(dir, 'cal-4.json');
    writeFileSync(cal, '{"earlier": true}\n');
    const fit = gymflow('reward', 'calibrate', '--labels', labels, '--scored', copy, '-o', cal);
    expect([fit.status, fit.stderr.trim()]).toEqual([1, message(cal)]);
    expect(readFileSync(cal, 'utf8')).toBe('{"earlier": true}\n');
    expect(gymflow('reward', 'calibrate', '--labels', labels, '--scored', copy, '-o', cal, '--force').status).toBe(0);
    expect(JSON.parse(readFileSync(cal, 'utf8'))).not.toHaveProperty('earlier');
  });

  it('infers the calibration level from the labels and names a judge config that is no object', () => {
    const scored = join(dir, 'scored-3.jsonl');
    expect(gymflow('reward', 'score', runs, '--domain', 'tool-use', '-o', scored).status).toBe(0);
    const trajectories = readFileSync(scored, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; steps: { index: number; reward: { score: number } }[] });
    const labels = trajectories.flatMap((t) => t.steps.map((s) => JSON.stringify({ trajectoryId: t.id, stepIndex: s.index, score: s.reward.score > 0.5 ? 5 : 1 })));
    const labelsPath = join(dir, 'step-labels.jsonl');
    writeFileSync(labelsPath, `${labels.join('\n')}\n`);
    const fit = gymflow('reward', 'calibrate', '--labels', labelsPath, '--scored', scored, '-o', join(dir, 'cal.json'), '--json');
    expect(fit.status).toBe(0);
    expect(JSON.parse(fit.stdout)).toMatchObject({ level: 'step', ignored: 0, unmatched: 0 });
    const asTrajectories = gymflow('reward', 'calibrate', '--labels', labelsPath, '--scored', scored, '-o', join(dir, 'cal2.json'), '--level', 'trajectory');
    expect(asTrajectories.stderr).toMatch(/step-level label\(s\) were left out at level trajectory \(choose level step\)/);

    const judgeConfig = join(dir, 'judge.json');
    writeFileSync(judgeConfig, 'null');
    const nul = gymflow('reward', 'score', runs, '--domain', 'coding', '--judge-config', judgeConfig, '-o', join(dir, 'x.jsonl'));
    expect([nul.status, nul.stderr.trim()]).toEqual([1, `gymflow: --judge-config ${judgeConfig} $: expected a JSON object of judge settings, got null`]);
    writeFileSync(judgeConfig, '\uFEFF{"provider":"openai","model":"m","concurrency":0}');
    const field = gymflow('reward', 'score', runs, '--domain', 'coding', '--judge-config', judgeConfig, '-o', join(dir, 'x.jsonl'));
    expect(field.stderr).toContain(`${judgeConfig} $.concurrency`);
  });

  it('says what the judge cost before a failure stopped the scoring, and how to keep its verdicts', async () => {
    const api = await LoopbackApi.start(() => ({ status: 401, body: openaiError('bad key', 'authentication_error') }));
    try {
      const args = [join(PACKAGE_ROOT, 'bin', 'gymflow.js'), 'reward', 'score', runs, '--domain', 'tool-use', '--judge', 'openai', '--model', 'm', '--judge-base-url', `${api.url}/v1`, '-o', join(dir, 'judged.jsonl')];
      const failed = await run(args, { OPENAI_API_KEY: 'sk-test' });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/^judge before the failure: [1-9]\d* requests, 0 cache hits, .*; its verdicts are lost: set cachePath in --judge-config so a rerun reuses them$/m);
      expect(failed.stderr).toMatch(/HTTP 401.*check OPENAI_API_KEY/);
    } finally {
      await api.close();
    }
  });
});

/** Runs a command without blocking this process (the loopback server must answer it). */
function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

