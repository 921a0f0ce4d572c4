import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CountdownEnv } from '../../core/__fixtures__/countdown-env.js';
import type { Agent, AgentContext, AgentDecision } from '../../core/agent.js';
import { listEnvs, register } from '../../core/registry.js';
import { meanPassHatK } from '../../core/stats/pass-hat-k.js';
import { taskOutcomes } from '../../eval/pass-k.js';
import { parseEvalResult, type EvalResult } from '../../eval/result.js';
import { registerBuiltinEnvs } from '../../envs/index.js';
import { RandomAgent } from '../../policy/random.js';
import { formatValue } from '../../eval/format.js';
import { runCommand } from './__fixtures__/run-command.js';
import { evalCommand } from './eval.js';

/** Runs `gymflow eval …` and returns what it printed on stdout. */
const run = (...args: string[]): Promise<string> => runCommand([evalCommand], ...args);

/** Counts down and submits when its episode seed is even; submits at once (failing) when odd. */
class CoinAgent implements Agent {
  readonly info = { name: 'coin' };
  constructor(private readonly seed: number) {}
  async act(ctx: AgentContext): Promise<AgentDecision> {
    const counter = Number(/counter=(-?\d+)/.exec(ctx.observation)?.[1] ?? 0);
    if (this.seed % 2 !== 0 || counter <= 0) return { action: { tool: 'submit', params: {} } };
    return { action: { tool: 'decrement', params: { by: Math.min(3, counter) } } };
  }
}

beforeAll(() => {
  registerBuiltinEnvs();
  register('test/coin-eval-v0', () => new CountdownEnv(), {
    domain: 'generic',
    description: 'countdown whose coin agent succeeds on even seeds',
    agents: { coin: ({ seed }) => new CoinAgent(seed ?? 0) },
  }, { replace: true });
});
afterEach(() => vi.restoreAllMocks());

describe('gymflow eval', () => {
  it('evaluates on held-out tasks and writes the result, the JSON and the Markdown', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-eval-'));
    const out = join(dir, 'expert.json');
    const md = join(dir, 'expert.md');
    const text = await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '12', '--seed', '5', '--out', out, '--markdown', md);
    expect(text).toMatch(/gymflow\/tool-use-v0 agent=expert split=heldout episodes=12 tasks=12 seed=5/);
    expect(text).toMatch(/success\s+1\s+0\s+\[1, 1\]\s+12/);
    expect(text).toMatch(/success 12\/12, Wilson 95% \[0\.\d+, 1\]/);
    const result = parseEvalResult(JSON.parse(readFileSync(out, 'utf8')), out);
    expect(result).toMatchObject({ agent: 'expert', split: 'heldout', n: 12, seed: 5 });
    expect(result.episodes.every((e) => e.success)).toBe(true);
    expect(readFileSync(md, 'utf8')).toContain('### expert on gymflow/tool-use-v0');

    const json = JSON.parse(await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '12', '--seed', '5', '--json')) as typeof result;
    expect(json.episodes.map((e) => e.trajectoryId)).toEqual(result.episodes.map((e) => e.trajectoryId));
  });

  it('runs --trials and reports pass^1..pass^k, non-increasing in k and never above pass^1', async () => {
    // The brief's shape on a built-in environment: the random agent never solves tool-use, so every pass^k is 0.
    const text = await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'random', '--trials', '3', '-n', '5', '--resamples', '200');
    expect(text).toMatch(/episodes=15 tasks=5 trials=3 seed=0/);
    expect(text).toMatch(/pass\^k over 5 tasks, 3 trials, 95% bootstrap over tasks: pass\^1 0 \[0, 0\] · pass\^2 0 \[0, 0\] · pass\^3 0 \[0, 0\]/);

    // An agent whose success depends on the episode seed: pass^k falls with k.
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-eval-trials-'));
    const out = join(dir, 'coin.json');
    const md = join(dir, 'coin.md');
    const args = ['eval', '--env', 'test/coin-eval-v0', '--agent', 'coin', '--split', 'train', '-n', '4', '--trials', '4', '--seed', '2', '--resamples', '300'];
    const table = await run(...args, '--out', out, '--markdown', md);
    const result = parseEvalResult(JSON.parse(readFileSync(out, 'utf8')), out);
    expect(result).toMatchObject({ n: 16, trials: 4, tasks: 4 });
    const passK = result.passK as NonNullable<EvalResult['passK']>;
    expect(passK.map((p) => p.k)).toEqual([1, 2, 3, 4]);
    // pass^1 is the success rate (every task ran 4 times); each pass^k is C(c,k)/C(n,k) averaged over the tasks.
    expect(passK[0]?.value).toBeCloseTo(result.metrics.success.mean as number, 12);
    const tasks = taskOutcomes(result.episodes);
    expect(tasks.map((t) => t.trials)).toEqual([4, 4, 4, 4]);
    passK.forEach((p) => expect(p.value).toBeCloseTo(meanPassHatK(tasks, p.k), 12));
    for (let i = 1; i < passK.length; i++) {
      const [prev, cur] = [passK[i - 1], passK[i]] as [(typeof passK)[0], (typeof passK)[0]];
      expect(cur.value).toBeLessThanOrEqual(prev.value);
      expect(cur.low).toBeLessThanOrEqual(prev.low);
      expect(cur.high).toBeLessThanOrEqual(prev.high);
      expect(cur.value).toBeLessThanOrEqual(passK[0]?.value as number);
    }
    // Not a degenerate run: some but not all episodes succeeded, and pass^4 is below pass^1.
    expect(result.metrics.success.successes).toBeGreaterThan(0);
    expect(result.metrics.success.successes).toBeLessThan(16);
    expect(passK[3]?.value).toBeLessThan(passK[0]?.value as number);
    expect(table).toContain(`pass^k over 4 tasks, 4 trials, 95% bootstrap over tasks: pass^1 ${formatValue(passK[0]?.value)}`);
    expect(readFileSync(md, 'utf8')).toMatch(/4 trials · seed 2/);
    expect(readFileSync(md, 'utf8')).toContain('pass^k over 4 tasks, 4 trials');

    // Trial 0 is the run without --trials: same tasks, seeds and trajectories.
    const single = JSON.parse(await run('eval', '--env', 'test/coin-eval-v0', '--agent', 'coin', '--split', 'train', '-n', '4', '--seed', '2', '--resamples', '300', '--json')) as EvalResult;
    expect(single).not.toHaveProperty('passK');
    expect(result.episodes.slice(0, 4).map((e) => e.trajectoryId)).toEqual(single.episodes.map((e) => e.trajectoryId));
    await expect(run(...args.slice(0, -2), '--trials', '0')).rejects.toThrow(/expected a positive integer, got '0'/);
  });

  it('breaks success down by a task metadata field with --by', async () => {
    const text = await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '74', '--by', 'answerInTrain');
    expect(text).toMatch(/answerInTrain\s+success\s+rate\s+Wilson 95%/);
    expect(text).toMatch(/false\s+15\/15\s+1\s+\[0\.\d+, 1\]/);
    expect(text).toMatch(/true\s+59\/59\s+1\s+\[0\.\d+, 1\]/);
    const json = JSON.parse(await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '74', '--by', 'kind', '--json')) as {
      breakdown: { field: string; rows: { value: string; n: number }[] };
    };
    expect(json.breakdown.field).toBe('kind');
    expect(json.breakdown.rows.map((r) => [r.value, r.n])).toEqual([
      ['diff-years', 10],
      ['discount', 8],
      ['hop', 10],
      ['lookup', 16],
      ['search-compute', 10],
      ['search-lookup', 10],
      ['sum', 10],
    ]);
    await expect(run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '2', '--by', 'level')).rejects.toThrow(/no task has the metadata field 'level' \(fields: answerInTrain, answerType, kind\)/);
  });

  it('rejects bad arguments with messages naming them', async () => {
    await expect(run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '--split', 'test')).rejects.toThrow(/expected train or heldout, got 'test'/);
    await expect(run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '0')).rejects.toThrow(/expected a positive integer, got '0'/);
    await expect(run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '--confidence', '95')).rejects.toThrow(/between 0 and 1/);
    await expect(run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'genius', '-n', '2')).rejects.toThrow(/unknown agent 'genius'/);
    await expect(run('eval', '--env', 'gymflow/nope-v0', '--agent', 'expert')).rejects.toThrow(/'gymflow\/nope-v0' is not registered/);
    // --env and --agent are required unless --benchmark names what to grade.
    await expect(run('eval', '--agent', 'expert')).rejects.toThrow("error: required option '--env <id>' not specified");
    await expect(run('eval', '--env', 'gymflow/tool-use-v0')).rejects.toThrow("error: required option '--agent <spec>' not specified");
    await expect(run('eval', '--benchmark', 'swe-bench', '--env', 'gymflow/tool-use-v0')).rejects.toThrow('--benchmark and --env');
    // Where the result goes is checked before the episodes run.
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-eval-out-'));
    writeFileSync(join(dir, 'a-file'), '');
    await expect(run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '2', '--out', dir)).rejects.toThrow(`cannot write ${dir}: is a directory`);
    await expect(run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '2', '--markdown', join(dir, 'a-file', 'r.md'))).rejects.toThrow(/a-file is a file, not a directory/);
    await run('eval', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '2', '--out', join(dir, 'new', 'r.json'));
    expect(readdirSync(join(dir, 'new'))).toEqual(['r.json']);
  });

  it('never replaces an earlier result, report or --save name unless --force, and refuses before the first episode', async () => {
    let made = 0;
    if (!listEnvs().some((e) => e.id === 'test/counted-eval-v0')) {
      register('test/counted-eval-v0', () => {
        made++;
        return new CountdownEnv();
      }, { domain: 'generic', description: 'counts the environments made', agents: { expert: () => new RandomAgent({ seed: 0 }) } });
    }
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-eval-again-'));
    const out = join(dir, 'r.json');
    const md = join(dir, 'r.md');
    const base = ['eval', '--env', 'test/counted-eval-v0', '--agent', 'expert', '--split', 'train', '--resamples', '50'];
    await run(...base, '-n', '2', '--out', out, '--markdown', md);
    const [firstOut, firstMd] = [readFileSync(out, 'utf8'), readFileSync(md, 'utf8')];
    made = 0;
    await expect(run(...base, '-n', '3', '--out', out)).rejects.toThrow(`output ${out} already exists (pass --force to replace it, or choose another path)`);
    await expect(run(...base, '-n', '3', '--out', join(dir, 'new.json'), '--markdown', md)).rejects.toThrow(`output ${md} already exists (pass --force`);
    await expect(run(...base, '-n', '3', '--out', out, '--markdown', out, '--force')).rejects.toThrow(`--out and --markdown are both ${out}`);
    expect(made).toBe(0); // no episode ran
    expect([readFileSync(out, 'utf8'), readFileSync(md, 'utf8')]).toEqual([firstOut, firstMd]);
    expect(readdirSync(dir).sort()).toEqual(['r.json', 'r.md']);
    await run(...base, '-n', '3', '--out', out, '--markdown', md, '--force');
    expect(parseEvalResult(JSON.parse(readFileSync(out, 'utf8')), out).n).toBe(3);
    expect(readFileSync(md, 'utf8')).not.toBe(firstMd);

    const store = join(dir, 'store');
    const saved = /result stored as (sha256:[0-9a-f]{64})/.exec(await run(...base, '-n', '2', '--save', 'eval/a', '--store', store))?.[1] as string;
    made = 0;
    await expect(run(...base, '-n', '3', '--save', 'eval/a', '--store', store)).rejects.toThrow(`'eval/a' already names ${saved.slice(0, 19)} in store ${store} (pass --force to move the name`);
    expect(made).toBe(0);
    expect(readFileSync(join(store, 'refs', 'eval', 'a'), 'utf8').trim()).toBe(saved);
    await run(...base, '-n', '3', '--save', 'eval/a', '--store', store, '--force');
    expect(readFileSync(join(store, 'refs', 'eval', 'a'), 'utf8').trim()).not.toBe(saved);
  });
});
