import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { SchemaError } from './errors.js';
import { makeTrajectory, parseJsonlLines, parseTrajectory, trajectoryId, trajectoryJsonSchema, type Trajectory } from './trajectory.js';

const base = (): Omit<Trajectory, 'id' | 'schemaVersion'> => ({
  task: { id: 'math-1', domain: 'math', instruction: '2+2?' },
  envId: 'gymflow/text-math-v0',
  agent: { name: 'expert' },
  steps: [
    { index: 0, thought: 'easy', action: { tool: 'submit', params: { answer: '4' } }, observation: 'correct', envReward: 1, startedAt: '2026-01-01T00:00:00.000Z', durationMs: 3 },
  ],
  outcome: { success: true, score: 1, terminated: true, truncated: false, reason: 'submitted' },
  metadata: {},
});

describe('trajectory schema', () => {
  it('round-trips through JSON and keeps its content id', () => {
    const t = makeTrajectory(base());
    const back = parseTrajectory(JSON.parse(JSON.stringify(t)), 'x');
    expect(back).toEqual(t);
    expect(trajectoryId(back)).toBe(t.id);
  });

  it('ids ignore timing and rewards but include the task', () => {
    const a = makeTrajectory(base());
    const slower = base();
    slower.steps[0] = { ...slower.steps[0]!, startedAt: '2027-01-01T00:00:00.000Z', durationMs: 99, reward: { score: 0.5, rubrics: {} } };
    expect(makeTrajectory(slower).id).toBe(a.id);
    const otherTask = base();
    otherTask.task = { ...otherTask.task, id: 'math-2' };
    expect(makeTrajectory(otherTask).id).not.toBe(a.id);
  });

  it('emits a JSON Schema that accepts valid trajectories and rejects invalid ones', () => {
    const schema = trajectoryJsonSchema();
    const ajv = new Ajv2020({ strict: false });
    ajv.addFormat('date-time', true);
    const validate = ajv.compile(schema);
    const t = makeTrajectory(base());
    expect(validate(t)).toBe(true);
    expect(validate({ ...t, steps: [{ ...t.steps[0], action: { tool: null, params: {} } }] })).toBe(false);
  });

  it('names the place and JSON path of every problem', () => {
    const t = makeTrajectory(base()) as unknown as Record<string, unknown>;
    const bad = { ...t, steps: [{ ...(t.steps as object[])[0], action: { tool: null, params: {} } }], outcome: { ...(t.outcome as object), terminated: true, truncated: true } };
    try {
      parseTrajectory(bad, 'trajectories.jsonl:17');
      expect.fail('should throw');
    } catch (err) {
      expect(err).toBeInstanceOf(SchemaError);
      expect((err as SchemaError).issues).toEqual([
        'trajectories.jsonl:17 $.steps[0].action.tool: Invalid input: expected string, received null',
        'trajectories.jsonl:17 $.outcome: terminated and truncated are both true; exactly one (or neither) may hold',
      ]);
    }
  });

  it('parses JSONL, reporting bad lines with file and line and keeping the rest', () => {
    const good = JSON.stringify(makeTrajectory(base()));
    const lines = [good, '', '{not json', JSON.stringify({ ...JSON.parse(good), envId: 7 }), good];
    const records = [...parseJsonlLines(lines, 'runs.jsonl', parseTrajectory)];
    expect(records.map((r) => [r.line, r.ok])).toEqual([
      [1, true],
      [3, false],
      [4, false],
      [5, true],
    ]);
    const errors = records.flatMap((r) => (r.ok ? [] : r.errors));
    expect(errors[0]).toMatch(/^runs\.jsonl:3 \$: invalid JSON/);
    expect(errors[1]).toBe('runs.jsonl:4 $.envId: Invalid input: expected string, received number');
  });
});
