import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CountdownEnv } from '../core/__fixtures__/countdown-env.js';
import type { Agent, AgentContext, AgentDecision, AgentResolver } from '../core/agent.js';
import { ConfigError } from '../core/errors.js';
import { register } from '../core/registry.js';
import type { Trajectory } from '../core/trajectory.js';
import { registerBuiltinEnvs } from '../envs/register.js';
import { evaluate } from './evaluate.js';
import { toMarkdown } from './markdown.js';
import { parseEvalResult } from './result.js';

const ENV = 'test/eval-countdown-v0';
let envsMade = 0;
let envsClosed = 0;

/** Decrements by 3 while it can, then submits; records fake token ids so token totals can be checked. */
class Solver implements Agent {
  readonly info = { name: 'solver' };
  async act(ctx: AgentContext): Promise<AgentDecision> {
    const counter = Number(/counter=(-?\d+)/.exec(ctx.observation)?.[1] ?? 0);
    if (counter <= 0) return { action: { tool: 'submit', params: {} } };
    return { action: { tool: 'decrement', params: { by: Math.min(3, counter) } }, meta: { tokens: { prompt: [1, 2], completion: [3] } } };
  }
}

/** Always makes one invalid call first, then gives up. */
class Sloppy implements Agent {
  readonly info = { name: 'sloppy' };
  async act(ctx: AgentContext): Promise<AgentDecision> {
    return ctx.stepIndex === 0 ? { action: { tool: 'jump', params: {} } } : { action: { tool: 'submit', params: {} } };
  }
}

/** Solves the countdown when its seed is even, submits at once (failing) when odd: success varies by seed. */
class Coin implements Agent {
  readonly info = { name: 'coin' };
  private readonly solver = new Solver();
  constructor(private readonly seed: number) {}
  async act(ctx: AgentContext): Promise<AgentDecision> {
    return this.seed % 2 === 0 ? this.solver.act(ctx) : { action: { tool: 'submit', params: {} } };
  }
}

class Broken implements Agent {
  readonly info = { name: 'broken' };
  async act(): Promise<AgentDecision> {
    throw new Error('model server unreachable');
  }
}

const resolveAgent: AgentResolver = (spec, _envId, { seed }) => {
  if (spec === 'solver') return new Solver();
  if (spec === 'coin') return new Coin(seed ?? 0);
  if (spec === 'sloppy') return new Sloppy();
  if (spec === 'broken') return new Broken();
  throw new ConfigError(`unknown agent '${spec}'`);
};

/** The keyword arguments every `make` of test/eval-kwargs-v0 received. */
const kwargsSeen: Record<string, unknown>[] = [];

beforeAll(() => {
  register(
    ENV,
    () => {
      envsMade += 1;
      const env = new CountdownEnv();
      const close = env.close.bind(env);
      env.close = async () => {
        envsClosed += 1;
        await close();
      };
      return env;
    },
    { domain: 'generic', description: 'countdown for eval tests', maxEpisodeSteps: 20 },
    { replace: true },
  );
  register('test/eval-kwargs-v0', (kwargs) => (kwargsSeen.push(kwargs), new CountdownEnv()), { domain: 'generic', description: '' }, { replace: true });
  register('test/eval-no-tasks-v0', () => Object.assign(new CountdownEnv(), { listTasks: () => [] }), { domain: 'generic', description: '' }, { replace: true });
});

describe('evaluate', () => {
  it('cycles over the held-out tasks with derived seeds and measures every episode', async () => {
    const r = await evaluate({ envId: ENV, agent: 'solver', resolveAgent, n: 5, seed: 3, resamples: 200 });
    expect(r.episodes.map((e) => e.taskId)).toEqual(['countdown-7', 'countdown-8', 'countdown-7', 'countdown-8', 'countdown-7']);
    // Pinned: stored results are compared pair by pair with new ones of the same seed.
    expect(r.episodes.map((e) => e.seed)).toEqual([884521706, 1289306659, 1214976533, 705069852, 734751661]);
    expect(r).toMatchObject({ envId: ENV, agent: 'solver', agentName: 'solver', split: 'heldout', n: 5, seed: 3, tasks: 2, resamples: 200 });
    // countdown-7: 3+3+1 then submit (4 steps, 3 tool calls); countdown-8: 3+3+2 then submit.
    expect(r.episodes[0]).toMatchObject({ success: true, reward: 1, steps: 4, toolCalls: 3, invalidActions: 0, tokens: 9, costUsd: 0 });
    expect(r.metrics.success).toMatchObject({ n: 5, mean: 1, successes: 5, ci: { low: 1, high: 1 } });
    expect(r.metrics.success.wilson?.high).toBe(1);
    expect(r.metrics.success.wilson?.low).toBeGreaterThan(0.5);
    expect(r.metrics.steps.mean).toBe(4);
    expect(r.metrics.tokens).toMatchObject({ n: 5, mean: 9 });
  });

  it('gives the same episodes and summaries at any concurrency, one environment per worker', async () => {
    envsMade = 0;
    envsClosed = 0;
    const a = await evaluate({ envId: ENV, agent: 'sloppy', resolveAgent, n: 9, concurrency: 1, resamples: 300 });
    const made1 = envsMade;
    const b = await evaluate({ envId: ENV, agent: 'sloppy', resolveAgent, n: 9, concurrency: 4, resamples: 300 });
    expect(made1).toBe(2); // the task-list probe + one worker
    expect(envsMade - made1).toBe(5); // probe + four workers
    expect(envsClosed).toBe(envsMade);
    const strip = (r: typeof a) => r.episodes.map(({ durationMs: _d, ...rest }) => rest);
    expect(strip(b)).toEqual(strip(a));
    expect(b.metrics.reward).toEqual(a.metrics.reward);
    expect(a.metrics.invalidActions.mean).toBe(1);
    expect(a.metrics.success.mean).toBe(0);
    expect(a.metrics.tokens).toEqual({ n: 0, mean: null, sd: null, ci: null });
  });

  it('resumes from an earlier attempt: runs only the episodes it had not finished, with the same result', async () => {
    const journaled = new Map<number, Trajectory>();
    const full = await evaluate({ envId: ENV, agent: 'coin', resolveAgent, n: 4, trials: 2, seed: 5, resamples: 300, onEpisode: (e, t) => void journaled.set(e.index, t) });
    const kept = new Map([...journaled].filter(([i]) => i !== 2 && i !== 7));
    const ran: number[] = [];
    const resumed = await evaluate({ envId: ENV, agent: 'coin', resolveAgent, n: 4, trials: 2, seed: 5, resamples: 300, resume: kept, onEpisode: (e) => void ran.push(e.index) });
    expect(ran.sort()).toEqual([2, 7]);
    const strip = (r: typeof full) => ({ ...r, createdAt: '', episodes: r.episodes.map(({ durationMs: _d, ...rest }) => rest), metrics: { ...r.metrics, durationMs: undefined } });
    expect(strip(resumed)).toEqual(strip(full));
  });

  it('writes a JSON-serialisable result that parses back, and a Markdown table', async () => {
    const r = await evaluate({ envId: ENV, agent: 'solver', resolveAgent, n: 4, resamples: 100 });
    const back = parseEvalResult(JSON.parse(JSON.stringify(r)), 'r.json');
    expect(back).toEqual(r);
    const md = toMarkdown(r);
    expect(md).toContain('### solver on test/eval-countdown-v0');
    expect(md).toContain('| success rate | 1 | 0 | [1, 1] | 4 |');
    expect(md).toMatch(/Success: 4\/4, Wilson 95% interval \[0\.\d+, 1\]/);
  });

  it('runs the tasks again per trial with fresh seeds and reports pass^1..pass^trials', async () => {
    const r = await evaluate({ envId: ENV, agent: 'coin', resolveAgent, n: 2, trials: 3, seed: 3, resamples: 200 });
    expect(r).toMatchObject({ n: 6, trials: 3, tasks: 2 });
    expect(r.episodes.map((e) => e.taskId)).toEqual(['countdown-7', 'countdown-8', 'countdown-7', 'countdown-8', 'countdown-7', 'countdown-8']);
    // Episode j has the j-th seed of the stream (the first five pinned above), so trial 0 is the run without trials.
    expect(r.episodes.map((e) => e.seed)).toEqual([884521706, 1289306659, 1214976533, 705069852, 734751661, 1204756178]);
    const single = await evaluate({ envId: ENV, agent: 'coin', resolveAgent, n: 2, seed: 3, resamples: 200 });
    expect(single).not.toHaveProperty('trials');
    expect(single).not.toHaveProperty('passK');
    expect(r.episodes.slice(0, 2).map((e) => e.trajectoryId)).toEqual(single.episodes.map((e) => e.trajectoryId));
    // Even seeds succeed. countdown-7 ran with 884521706, 1214976533, 734751661: S F F (c = 1 of 3);
    // countdown-8 with 1289306659, 705069852, 1204756178: F S S (c = 2 of 3).
    expect(r.episodes.map((e) => e.success)).toEqual([true, false, false, true, false, true]);
    // pass^1 = (1/3 + 2/3) / 2 = 1/2; pass^2 = (0 + C(2,2)/C(3,2)) / 2 = 1/6; pass^3 = (0 + 0) / 2 = 0.
    expect(r.passK?.map((p) => p.k)).toEqual([1, 2, 3]);
    [1 / 2, 1 / 6, 0].forEach((v, i) => expect(r.passK?.[i]?.value).toBeCloseTo(v, 14));
    expect(r.passK?.[0]?.value).toBeCloseTo(r.metrics.success.mean as number, 14); // every task ran 3 times
    expect(parseEvalResult(JSON.parse(JSON.stringify(r)), 'r.json')).toEqual(r);
    expect(toMarkdown(r)).toMatch(/pass\^k over 2 tasks, 3 trials/);
    await expect(evaluate({ envId: ENV, agent: 'coin', resolveAgent, n: 2, trials: 0 })).rejects.toThrow(/trials must be a positive integer, got 0/);
  });

  it('makes every environment with envKwargs and records them in the result', async () => {
    const r = await evaluate({ envId: 'test/eval-kwargs-v0', envKwargs: { user: 'scripted' }, agent: 'solver', resolveAgent, n: 3, concurrency: 2, resamples: 50 });
    expect(kwargsSeen.length).toBeGreaterThanOrEqual(2);
    expect(kwargsSeen.every((k) => k['user'] === 'scripted')).toBe(true);
    expect(parseEvalResult(JSON.parse(JSON.stringify(r)), 'result').envKwargs).toEqual({ user: 'scripted' });
    // Without them the result has no such field (results stay as they were).
    expect(await evaluate({ envId: ENV, agent: 'solver', resolveAgent, n: 1, resamples: 50 })).not.toHaveProperty('envKwargs');
  });

  it('names the episode, task and seed when an episode fails', async () => {
    await expect(evaluate({ envId: ENV, agent: 'broken', resolveAgent, n: 3 })).rejects.toThrow(
      /episode \d of broken on test\/eval-countdown-v0 \(task countdown-[78], seed \d+\) failed: model server unreachable/,
    );
  });

  it('rejects bad options, unknown agents and splits without tasks by name', async () => {
    await expect(evaluate({ envId: ENV, agent: 'solver', resolveAgent, n: 0 })).rejects.toThrow(/n must be a positive integer, got 0/);
    await expect(evaluate({ envId: ENV, agent: 'solver', resolveAgent, n: 2, concurrency: 1.5 })).rejects.toThrow(/concurrency/);
    await expect(evaluate({ envId: ENV, agent: 'solver', resolveAgent, n: 2, confidence: 2 })).rejects.toThrow(/confidence must be in \(0, 1\), got 2/);
    await expect(evaluate({ envId: ENV, agent: 'genius', resolveAgent, n: 2 })).rejects.toThrow(/unknown agent 'genius'/);
    await expect(evaluate({ envId: 'test/nope-v0', agent: 'solver', resolveAgent, n: 2 })).rejects.toThrow(/'test\/nope-v0' is not registered/);
    await expect(evaluate({ envId: 'test/eval-no-tasks-v0', agent: 'solver', resolveAgent, n: 2 })).rejects.toThrow(
      /test\/eval-no-tasks-v0 lists no 'heldout' tasks/,
    );
  });

  it('parseEvalResult names the file and the JSON path of each problem', () => {
    expect(() => parseEvalResult({ format: 'gymflow.eval/v1', n: 0 }, 'runs/x.json')).toThrow(/runs\/x\.json \$\.envId: /);
  });
});

describe('evaluate on stated confidences (gymflow/qa-v0, the rule check)', () => {
  const questions = join(import.meta.dirname, '..', 'envs', 'qa', '__fixtures__', 'questions.jsonl');
  /** Per question of the fixture set: the response (right or wrong) and its stated confidence. */
  const RESPONSES: Record<string, string> = {
    'q-capital': 'Exact Answer: Canberra\nConfidence: 90%',
    'q-prime': 'Exact Answer: 97\nConfidence: 80%',
    'q-noble': 'Answer: A\nConfidence: 70%',
    'q-derivative': 'Exact Answer: 13\nConfidence: 60%',
    'q-planets': 'Answer: D',
  };
  const answering: AgentResolver = () => ({
    info: { name: 'answering' },
    act: async ({ task }) => ({ action: { tool: 'answer', params: { response: RESPONSES[task.id] as string } } }),
  });

  beforeAll(() => registerBuiltinEnvs());

  it('reports the RMS calibration error of the stated confidences and the environment notes', async () => {
    const r = await evaluate({ envId: 'gymflow/qa-v0', envKwargs: { questions }, agent: 'answering', resolveAgent: answering, n: 5, resamples: 50 });
    expect(r.metrics.success).toMatchObject({ successes: 3, n: 5 });
    expect(r.episodes.map((e) => [e.taskId, e.confidence])).toEqual([
      ['q-capital', 0.9],
      ['q-prime', 0.8],
      ['q-noble', 0.7],
      ['q-derivative', 0.6],
      ['q-planets', 1],
    ]);
    // One bin (5 < 100): mean confidence 0.8, accuracy 0.6.
    expect(r.calibration).toMatchObject({ n: 5, binSize: 100, bins: [{ n: 5, accuracy: 0.6 }] });
    expect(r.calibration?.rmsError).toBeCloseTo(0.2, 12);
    expect(r.notes).toEqual([expect.stringMatching(/^1 of the 6 questions of .*questions\.jsonl have an image and were left out/)]);
    expect(parseEvalResult(JSON.parse(JSON.stringify(r)), 'qa.json').calibration).toEqual(r.calibration);
    expect(toMarkdown(r)).toContain('Calibration: RMS calibration error 0.200 (20.0 as HLE reports it) over 5 stated confidences, one bin.');
    expect(toMarkdown(r)).toContain('Note: 1 of the 6 questions');
  });

  it('cuts bins of calibrationBinSize; a result without confidences has no calibration', async () => {
    const r = await evaluate({ envId: 'gymflow/qa-v0', envKwargs: { questions }, agent: 'answering', resolveAgent: answering, n: 5, resamples: 50, calibrationBinSize: 2 });
    // Sorted: 0.6 ✗, 0.7 ✗ | 0.8 ✓, 0.9 ✓, 1 ✓ → √(0.4 · 0.65² + 0.6 · 0.1²).
    expect(r.calibration?.rmsError).toBeCloseTo(Math.sqrt(0.4 * 0.65 ** 2 + 0.6 * 0.1 ** 2), 12);
    expect(r.calibration?.bins.map((b) => b.n)).toEqual([2, 3]);
    const plain = await evaluate({ envId: ENV, agent: 'solver', resolveAgent, n: 2, resamples: 50 });
    expect(plain).not.toHaveProperty('calibration');
    expect(plain).not.toHaveProperty('notes');
    await expect(evaluate({ envId: ENV, agent: 'solver', resolveAgent, n: 2, calibrationBinSize: 0 })).rejects.toThrow(/calibrationBinSize must be a positive integer, got 0/);
  });
});
