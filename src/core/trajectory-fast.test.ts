import { describe, expect, it } from 'vitest';
import { contentRef } from './canonical.js';
import { checkTrajectory, checkTrajectoryJson, parseTrajectory, trajectoryId, TrajectorySchema, type Trajectory } from './trajectory.js';
import { fastCheckTrajectory, fastParseTrajectory } from './trajectory-fast.js';

/** A trajectory with every optional field set, as JSON gives it. */
function full(): Record<string, unknown> {
  const t = {
    schemaVersion: '1.0',
    id: `sha256:${'ab'.repeat(32)}`,
    task: { id: 't-1', domain: 'coding', instruction: 'Fix it.', split: 'heldout', metadata: { repo: 'x/y', n: [1, { deep: true }] } },
    envId: 'gymflow/sandbox-v0',
    agent: { name: 'policy', model: 'tiny', checkpoint: 'sha256:00' },
    steps: [
      {
        index: 0,
        thought: 'look first',
        action: { tool: 'shell', params: { command: 'ls', opts: { all: true } } },
        observation: 'a.py\nb.py',
        envReward: -0.5,
        tokens: { prompt: [1, 2, 3], completion: [4, 5] },
        logprobs: [-0.1, -2.5],
        startedAt: '2026-01-01T00:00:00.123456Z',
        durationMs: 0,
        error: { code: 'tool_error', message: 'boom' },
        reward: { score: 0.75, rubrics: { redundancy: { score: 1, layer: 'rules', weight: 0.5, rationale: 'first call' }, judge: { score: 0.5, layer: 'judge' } } },
        metadata: { category: 'execute' },
      },
      { index: 1, action: { tool: 'submit', params: {} }, observation: '', startedAt: '2026-01-01T00:00:01Z', durationMs: 12.5 },
    ],
    outcome: { success: true, score: 1, terminated: true, truncated: false, reason: 'submitted' },
    reward: { total: 0.9, outcome: 1, process: 0.8, efficiency: 0.7, layers: { env: 0.5, rules: 0.4 } },
    metadata: { source: { format: 'gymflow' } },
  };
  return JSON.parse(JSON.stringify(t)) as Record<string, unknown>;
}

/** Structure with key order and `undefined` members visible, for comparing two parse results exactly. */
function shape(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (v === undefined ? '<undefined>' : typeof v === 'number' && Object.is(v, -0) ? '<-0>' : v));
}

function zod(value: unknown): Trajectory | undefined {
  const r = TrajectorySchema.safeParse(value);
  return r.success ? r.data : undefined;
}

/** Every mutant of `value`: each member, at any depth, removed, replaced by an odd value, or given an unknown sibling. */
function* mutants(value: unknown, path: (string | number)[] = []): Generator<{ path: string; value: unknown }> {
  const root = value;
  const odd: unknown[] = [null, undefined, 'x', '', 1.5, -1, 0, Number.NaN, Number.POSITIVE_INFINITY, [], {}, true, [1.5], { a: 1 }];
  function* walk(node: unknown, at: (string | number)[]): Generator<(string | number)[]> {
    if (Array.isArray(node)) for (let i = 0; i < node.length; i++) yield* walk(node[i], [...at, i]);
    else if (node !== null && typeof node === 'object') for (const k of Object.keys(node)) yield* walk((node as Record<string, unknown>)[k], [...at, k]);
    yield at;
  }
  const clone = (): unknown => structuredClone(root);
  const parentOf = (v: unknown, at: (string | number)[]): Record<string | number, unknown> => at.slice(0, -1).reduce<unknown>((n, k) => (n as Record<string | number, unknown>)[k], v) as Record<string | number, unknown>;
  for (const at of walk(value, path)) {
    if (at.length === 0) continue;
    const key = at[at.length - 1] as string | number;
    const where = at.join('.');
    const removed = clone();
    const p = parentOf(removed, at);
    if (Array.isArray(p)) p.splice(key as number, 1);
    else delete p[key];
    yield { path: `${where} removed`, value: removed };
    for (const o of odd) {
      const m = clone();
      parentOf(m, at)[key] = o;
      yield { path: `${where} = ${String(o)}`, value: m };
    }
    const extra = clone();
    const q = parentOf(extra, at);
    if (!Array.isArray(q)) {
      q.zzz = 1;
      yield { path: `${where} + zzz`, value: extra };
    }
  }
}

describe('fastParseTrajectory', () => {
  it('returns exactly what zod returns for valid trajectories, keys in schema order', () => {
    const t = full();
    const fast = fastParseTrajectory(t);
    expect(fast).toBeDefined();
    expect(shape(fast)).toBe(shape(zod(t)));
    // Input keys in another order come out in the schema's order, as zod puts them.
    const shuffled = Object.fromEntries(Object.entries(t).reverse());
    expect(shape(fastParseTrajectory(shuffled))).toBe(shape(zod(shuffled)));
    expect(Object.keys(fastParseTrajectory(shuffled) as object)).toEqual(Object.keys(zod(shuffled) as object));
  });

  it('copies what zod copies, so the result does not alias its input', () => {
    const t = full();
    const fast = fastParseTrajectory(t) as Trajectory;
    const steps = t.steps as { action: { params: unknown }; tokens: { prompt: unknown }; metadata: unknown }[];
    expect(fast.steps).not.toBe(t.steps);
    expect(fast.metadata).not.toBe(t.metadata);
    expect(fast.steps[0]?.action.params).not.toBe(steps[0]?.action.params);
    expect(fast.steps[0]?.tokens?.prompt).not.toBe(steps[0]?.tokens.prompt);
    expect(fast.steps[0]?.metadata).not.toBe(steps[0]?.metadata);
  });

  it('on every mutant, either gives way to zod or agrees with it', () => {
    let accepted = 0;
    let declined = 0;
    for (const m of mutants(full())) {
      const fast = fastParseTrajectory(m.value);
      const slow = zod(m.value);
      if (fast === undefined) {
        declined++;
        continue;
      }
      accepted++;
      expect([m.path, slow !== undefined]).toEqual([m.path, true]);
      expect([m.path, shape(fast)]).toEqual([m.path, shape(slow)]);
    }
    // Both kinds occur: changed metadata values and optional fields removed stay valid; the rest does not.
    expect(accepted).toBeGreaterThan(50);
    expect(declined).toBeGreaterThan(500);
  });

  it('leaves the odd cases to zod: prototypes, symbol and __proto__ keys, keys set to undefined', () => {
    const withProto = full();
    withProto.metadata = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as unknown;
    expect(fastParseTrajectory(withProto)).toBeUndefined();
    expect(parseTrajectory(withProto, 'x').metadata).toEqual({ y: 2 });
    const withSymbol = full();
    withSymbol.metadata = { [Symbol('s')]: 1 };
    expect(fastParseTrajectory(withSymbol)).toBeUndefined();
    const undefinedKey = full();
    (undefinedKey.steps as Record<string, unknown>[])[1]!.thought = undefined;
    expect(fastParseTrajectory(undefinedKey)).toBeUndefined();
    expect('thought' in parseTrajectory(undefinedKey, 'x').steps[1]!).toBe(true);
    class Box {
      constructor(readonly tool = 'x') {}
    }
    const instance = full();
    (instance.steps as Record<string, unknown>[])[1]!.action = new Box();
    expect(fastParseTrajectory(instance)).toBeUndefined();
    const nullProto = full();
    nullProto.metadata = Object.assign(Object.create(null) as object, { a: 1 });
    expect(shape(fastParseTrajectory(nullProto))).toBe(shape(zod(nullProto)));
  });

  it('still reports every problem through zod', () => {
    const t = full();
    (t.steps as Record<string, unknown>[])[1]!.startedAt = '2026-01-01 00:00:01';
    expect(() => parseTrajectory(t, 'f.jsonl:3')).toThrow(/f\.jsonl:3 \$\.steps\[1\]\.startedAt/);
  });
});

describe('trajectoryId', () => {
  /** The definition: sha256 of the canonical JSON of the behaviour. */
  const reference = (t: Record<string, unknown>): string => {
    const steps = t.steps as Record<string, unknown>[];
    return contentRef({
      schemaVersion: t.schemaVersion,
      task: t.task,
      envId: t.envId,
      agent: t.agent,
      outcome: t.outcome,
      steps: steps.map((s) => ({ index: s.index, thought: s.thought, action: s.action, observation: s.observation, envReward: s.envReward, tokens: s.tokens, logprobs: s.logprobs, error: s.error })),
    });
  };

  it('is the content ref of the canonical behaviour, whatever the actions look like', () => {
    const t = full();
    expect(trajectoryId(t as unknown as Trajectory)).toBe(reference(t));
    const steps = t.steps as Record<string, unknown>[];
    for (const action of [{ params: { b: 1, a: [2, { d: 1, c: 0 }] }, tool: 'x' }, { tool: 'x' }, { tool: 'x', params: {}, extra: 1 }, ['x'], null, 'x']) {
      steps[1]!.action = action;
      expect(trajectoryId(t as unknown as Trajectory)).toBe(reference(t));
    }
    steps[1]!.envReward = Number.NaN;
    expect(() => trajectoryId(t as unknown as Trajectory)).toThrow(/non-finite/);
  });
});

describe('fastCheckTrajectory', () => {
  it('returns the value itself when its keys are in the schema order, equal to what zod returns', () => {
    const t = full();
    expect(fastCheckTrajectory(t)).toBe(t);
    expect(shape(t)).toBe(shape(zod(t)));
    // A trajectory as gymflow writes it (JSON.stringify of a parsed one) is checked in place.
    const written = JSON.parse(JSON.stringify(parseTrajectory(full(), 'x'))) as unknown;
    expect(fastCheckTrajectory(written)).toBe(written);
  });

  it('rebuilds only the objects whose keys are out of the schema order, at any depth, as zod orders them', () => {
    const top = Object.fromEntries(Object.entries(full()).reverse());
    const rebuilt = fastCheckTrajectory(top) as Trajectory;
    expect(rebuilt).not.toBe(top);
    expect(shape(rebuilt)).toBe(shape(zod(top)));
    // Only the top object: its members that were in order are kept.
    expect(rebuilt.steps).toBe(top.steps);
    expect(rebuilt.task).toBe(top.task);
    const reorder = (t: Record<string, unknown>, change: (t: Record<string, unknown>) => void): void => {
      change(t);
      const out = fastCheckTrajectory(t);
      expect(out).not.toBe(t);
      expect(shape(out)).toBe(shape(zod(t)));
      expect(shape(out)).toBe(shape(fastParseTrajectory(t)));
    };
    for (const key of ['task', 'agent', 'outcome', 'reward'] as const) reorder(full(), (t) => (t[key] = Object.fromEntries(Object.entries(t[key] as object).reverse())));
    const step0 = (t: Record<string, unknown>): Record<string, unknown> => (t.steps as Record<string, unknown>[])[0] as Record<string, unknown>;
    reorder(full(), (t) => ((t.steps as unknown[])[0] = Object.fromEntries(Object.entries(step0(t)).reverse())));
    reorder(full(), (t) => (step0(t).action = { params: {}, tool: 'shell' }));
    reorder(full(), (t) => (step0(t).tokens = { completion: [1], prompt: [2] }));
    reorder(full(), (t) => (step0(t).error = { message: 'm', code: 'c' }));
    reorder(full(), (t) => (step0(t).reward = { rubrics: {}, score: 1 }));
    reorder(full(), (t) => (((step0(t).reward as { rubrics: Record<string, unknown> }).rubrics.redundancy = { layer: 'rules', score: 1 })));
    // A scored file's line: `reward score` appends the trajectory's reward after its metadata.
    const scored = full();
    const { reward, ...rest } = scored;
    const line: Record<string, unknown> = { ...rest, reward };
    const out = fastCheckTrajectory(line) as Trajectory;
    expect(Object.keys(out)).toEqual(Object.keys(zod(line) as object));
    expect(out.steps).toBe(line.steps);
  });

  it('on every mutant, either declines or returns what zod returns', () => {
    let accepted = 0;
    for (const m of mutants(full())) {
      const fast = fastCheckTrajectory(m.value);
      if (fast === undefined) continue;
      accepted++;
      const slow = zod(m.value);
      expect([m.path, slow !== undefined]).toEqual([m.path, true]);
      expect([m.path, shape(fast)]).toEqual([m.path, shape(slow)]);
    }
    expect(accepted).toBeGreaterThan(50);
  });

  it('checkTrajectoryJson answers as checkTrajectory: the same trajectory, the same errors', () => {
    const good = parseTrajectory(full(), 'x');
    const line = JSON.stringify({ ...good, id: trajectoryId(good) });
    expect(shape(checkTrajectoryJson(JSON.parse(line), 'f:1'))).toBe(shape(checkTrajectory(JSON.parse(line), 'f:1')));
    for (const m of mutants(JSON.parse(line))) {
      const text = JSON.stringify(m.value) as string | undefined;
      if (text === undefined) continue;
      const run = (f: (v: unknown, p: string) => Trajectory): string => {
        try {
          return shape(f(JSON.parse(text), 'f:2'));
        } catch (err) {
          return String((err as Error).message);
        }
      };
      expect([m.path, run(checkTrajectoryJson)]).toEqual([m.path, run(checkTrajectory)]);
    }
  });
});
