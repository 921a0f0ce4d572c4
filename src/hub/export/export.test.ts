import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { make } from '../../core/registry.js';
import type { Trajectory } from '../../core/trajectory.js';
import type { ToolSpec } from '../../core/types.js';
import { registerBuiltinEnvs } from '../../envs/index.js';
import { buildPreferences } from '../../reward/preferences.js';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';
import { collect } from '../collect.js';
import { resolveAgent } from '../../policy/specs.js';
import { toBenchmarkRecords } from './benchmark.js';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from '../../core/chat/prompt.js';
import type { ToolLookup } from '../../core/chat/tool-lookup.js';
import { resolvePairs, toDpoRecord } from './dpo.js';
import { exportDataset } from './export.js';
import { groupByTask, toRlRecord } from './rl.js';
import { BenchmarkRecordSchema, DpoRecordSchema, RlRecordSchema, SftRecordSchema, type SftRecord } from './schemas.js';
import { parseSplitSpec, splitOfTask } from './select.js';
import { toSftRecord } from './sft.js';

const tools: ToolLookup = (envId) => {
  const env = make(envId);
  const t: readonly ToolSpec[] = env.tools;
  void env.close();
  return t;
};

let expert: Trajectory[] = [];
let random: Trajectory[] = [];

beforeAll(async () => {
  registerBuiltinEnvs();
  expert = (await collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'expert', n: 30, groupSize: 2, concurrency: 4, seed: 1 })).trajectories;
  random = (await collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'random', n: 30, groupSize: 2, concurrency: 4, seed: 1, maxSteps: 4 })).trajectories;
});

async function readJsonl(file: string): Promise<unknown[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

describe('sft records', () => {
  it('render system / user / assistant (thought + tool call) / tool turns, and validate', () => {
    const t = expert.find((x) => x.steps.length >= 3) as Trajectory;
    const r = SftRecordSchema.parse(toSftRecord(t, tools));
    expect(r.messages.map((m) => m.role)).toEqual(['system', 'user', ...t.steps.flatMap((_, i) => (i < t.steps.length - 1 ? ['assistant', 'tool'] : ['assistant']))]);
    const sys = r.messages[0] as SftRecord['messages'][number];
    expect(sys.content).toContain('"name":"lookup"');
    expect(sys.content).toContain(TOOL_CALL_OPEN);
    expect(r.messages[1]?.content).toBe(t.task.instruction);
    const a0 = r.messages[2] as SftRecord['messages'][number];
    const s0 = t.steps[0] as Trajectory['steps'][number];
    expect(a0.content.endsWith(`${TOOL_CALL_OPEN}\n{"name":"${s0.action.tool}","arguments":${JSON.stringify(Object.fromEntries(Object.entries(s0.action.params).sort(([a], [b]) => a.localeCompare(b))))}}\n${TOOL_CALL_CLOSE}`)).toBe(true);
    expect(a0.tool_calls).toEqual([{ id: 'call_0', type: 'function', function: { name: s0.action.tool, arguments: expect.any(String) } }]);
    expect(JSON.parse(a0.tool_calls?.[0]?.function.arguments ?? '')).toEqual(s0.action.params);
    expect(a0).toMatchObject({ train: true, step_index: 0, step_reward: null, env_reward: s0.envReward });
    expect(r.messages[3]).toMatchObject({ role: 'tool', content: s0.observation, name: s0.action.tool, tool_call_id: 'call_0', train: false, step_index: 0 });
    // The final observation ("Correct.") is not part of the conversation.
    expect(r.messages.at(-1)?.role).toBe('assistant');
    expect(r.messages.some((m) => m.content === 'Correct.')).toBe(false);
    expect(JSON.parse(r.tools)).toHaveLength(4);
    expect(r).toMatchObject({ trajectory_id: t.id, task_id: t.task.id, success: true, reward: 1, num_steps: t.steps.length });
  });

  it('masks invalid actions out of the loss and carries step rewards', () => {
    const t = fakeTrajectory({
      reward: 0.6,
      actions: [
        { tool: 'lookup', params: { entity: 'X' }, error: true, observation: 'Error: missing attribute' },
        { tool: 'lookup', params: { entity: 'X', attribute: 'y' } },
        { tool: 'submit', params: { answer: '1' } },
      ],
    });
    const r = SftRecordSchema.parse(toSftRecord(t));
    const assistants = r.messages.filter((m) => m.role === 'assistant');
    expect(assistants.map((m) => m.train)).toEqual([false, true, true]);
    expect(assistants.map((m) => m.step_reward)).toEqual([0.6, 0.6, 0.6]);
    expect(r.reward).toBe(0.6);
    // Without a registered env, tools are listed by name.
    expect(JSON.parse(r.tools)).toEqual([
      { type: 'function', function: { name: 'lookup', description: '', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'submit', description: '', parameters: { type: 'object' } } },
    ]);
  });
});

describe('dpo records', () => {
  it('share the common prefix as the prompt and start both continuations at the divergent assistant turn', () => {
    const common = { tool: 'lookup', params: { entity: 'A', attribute: 'b' }, thought: 'first', observation: 'A — b: 1' };
    const chosen = fakeTrajectory({ reward: 0.9, actions: [common, { tool: 'submit', params: { answer: '1' } }] });
    const rejected = fakeTrajectory({ reward: 0.1, success: false, actions: [common, { tool: 'submit', params: { answer: '2' } }] });
    const r = DpoRecordSchema.parse(toDpoRecord({ chosen, rejected }));
    expect(r.prompt.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(r.chosen.map((m) => m.role)).toEqual(['assistant']);
    expect(r.chosen[0]?.content).toContain('"answer":"1"');
    expect(r.rejected[0]?.content).toContain('"answer":"2"');
    expect(r).toMatchObject({ chosen_id: chosen.id, rejected_id: rejected.id, margin: 0.9 - 0.1 });
    expect(toDpoRecord({ chosen, rejected: chosen })).toBeUndefined();
  });

  it('pairs collected trajectories with the reward layer and validates every record', () => {
    const pool = [...expert, ...random];
    const { pairs } = buildPreferences(pool, { minMargin: 0.5 });
    expect(pairs.length).toBeGreaterThan(0);
    const resolved = resolvePairs(pool, pairs);
    for (const p of resolved) {
      expect(p.chosen.task.id).toBe(p.rejected.task.id);
      const r = toDpoRecord(p, tools);
      if (r) DpoRecordSchema.parse(r);
    }
    expect(() => resolvePairs(pool, [{ chosenId: 'sha256:nope', rejectedId: 'x' }])).toThrow(/sha256:nope, which is not in the input/);
  });
});

describe('rl records', () => {
  it('group the trajectories of a task with advantages, step rewards, tokens and seeds', () => {
    const a = fakeTrajectory({ task: 'g', reward: 1, tokens: true, metadata: { collect: { seed: 11 } } });
    const b = fakeTrajectory({ task: 'g', reward: 0, success: false });
    const c = fakeTrajectory({ task: 'h', reward: 0.5 });
    const groups = groupByTask([a, c, b]);
    expect(groups.map((g) => g.map((t) => t.task.id))).toEqual([['g', 'g'], ['h']]);
    const r = RlRecordSchema.parse(toRlRecord(groups[0] as Trajectory[]));
    expect(r).toMatchObject({ task_id: 'g', group_size: 2, reward_mean: 0.5, reward_std: 0.5 });
    expect(r.group.map((m) => m.advantage)).toEqual([1, -1]);
    expect(r.prompt.map((m) => m.role)).toEqual(['system', 'user']);
    expect(r.group[0]?.completion.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(r.group[0]?.tokens).toEqual([{ prompt: [1, 2, 3], completion: [4, 5] }, { prompt: [1, 2, 3], completion: [5, 5] }]);
    expect(r.group[0]?.logprobs).toEqual([[-0.5, -0.25], [-0.5, -0.25]]);
    expect(r.group[0]?.seed).toBe(11);
    expect(r.group[1]).toMatchObject({ tokens: null, logprobs: null, seed: null, step_rewards: [0, 0] });
    expect(RlRecordSchema.parse(toRlRecord([fakeTrajectory()])).group[0]?.step_rewards).toBeNull();
    expect(RlRecordSchema.parse(toRlRecord(groups[1] as Trajectory[])).group[0]?.advantage).toBe(0);
  });
});

describe('benchmark records', () => {
  it('take the best successful trajectory of each task as the reference and skip unsolved tasks', () => {
    const short = fakeTrajectory({ task: 'x' });
    const long = fakeTrajectory({ task: 'x', actions: [{ tool: 'search', params: { query: 'q' } }, { tool: 'lookup', params: { entity: 'A', attribute: 'b' } }, { tool: 'submit', params: { answer: '1' } }] });
    const failed = fakeTrajectory({ task: 'y', success: false });
    const { records, unsolved } = toBenchmarkRecords([long, failed, short]);
    expect(unsolved).toBe(1);
    expect(records).toHaveLength(1);
    const r = BenchmarkRecordSchema.parse(records[0]);
    expect(r.reference.trajectory_id).toBe(short.id);
    expect(r.reference.actions.map((a) => a.tool)).toEqual(['lookup', 'submit']);
    expect(JSON.parse(r.reference.actions[0]?.arguments ?? '')).toEqual({ entity: 'Velmora', attribute: 'population' });
    expect(r).toMatchObject({ attempts: 2, successes: 2, success_rate: 1, task_split: 'train', metadata: '{}' });
  });
});

describe('exportDataset', () => {
  it('writes one JSONL file per split with no task in two splits, every record valid', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-export-'));
    const out = path.join(dir, 'sft');
    const shares = parseSplitSpec('train=0.6,validation=0.2,test=0.2');
    const report = await exportDataset({ format: 'sft', trajectories: [...expert, ...random], out, splits: shares, seed: 3, tools });
    expect((await readdir(out)).sort()).toEqual(['test.jsonl', 'train.jsonl', 'validation.jsonl']);
    const tasksBySplit = new Map<string, Set<string>>();
    let total = 0;
    for (const s of ['train', 'validation', 'test']) {
      const rows = (await readJsonl(path.join(out, `${s}.jsonl`))).map((r) => SftRecordSchema.parse(r));
      total += rows.length;
      tasksBySplit.set(s, new Set(rows.map((r) => r.task_id)));
      for (const r of rows) expect(splitOfTask(r.task_id, shares, 3)).toBe(s);
      expect(rows.length).toBe(report.splits[s]);
    }
    expect(total).toBe(expert.length + random.length);
    const [tr, va, te] = ['train', 'validation', 'test'].map((s) => tasksBySplit.get(s) as Set<string>) as [Set<string>, Set<string>, Set<string>];
    for (const t of tr) expect(va.has(t) || te.has(t)).toBe(false);
    for (const t of va) expect(te.has(t)).toBe(false);
    await expect(exportDataset({ format: 'sft', trajectories: expert, out, splits: shares })).rejects.toThrow(/already exists/);
    // A single-file export to an existing directory: not "already exists (pass --force)", which --force cannot mend.
    await expect(exportDataset({ format: 'sft', trajectories: expert, out })).rejects.toThrow(`cannot write ${out}: is a directory`);
    await expect(exportDataset({ format: 'sft', trajectories: expert, out, force: true })).rejects.toThrow(`cannot write ${out}: is a directory`);
  });

  it('filters, dedups and keeps the top K', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-export-'));
    const pool = [...expert, ...random];
    const ok = await exportDataset({ format: 'sft', trajectories: pool, out: path.join(dir, 'ok.jsonl'), filters: { successOnly: true, maxSteps: 4 } });
    const rows = (await readJsonl(path.join(dir, 'ok.jsonl'))).map((r) => SftRecordSchema.parse(r));
    expect(rows.every((r) => r.success && r.num_steps <= 4)).toBe(true);
    expect(ok.kept).toBe(pool.filter((t) => t.outcome.success && t.steps.length <= 4).length);
    const dedup = await exportDataset({ format: 'sft', trajectories: pool, out: path.join(dir, 'dedup.jsonl'), dedup: true });
    expect(dedup.records).toBe(new Set(pool.map((t) => t.id)).size);
    const top = await exportDataset({ format: 'sft', trajectories: pool, out: path.join(dir, 'top.jsonl'), top: 10 });
    expect(top.records).toBe(10);
    const topRows = (await readJsonl(path.join(dir, 'top.jsonl'))).map((r) => SftRecordSchema.parse(r));
    // The 10 best are distinct successful solutions (copies lose on novelty).
    expect(topRows.every((r) => r.success)).toBe(true);
    expect(new Set(topRows.map((r) => r.trajectory_id)).size).toBe(10);
  });

  it('exports dpo, rl and benchmark records that match their schemas', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-export-'));
    const pool = [...expert, ...random];
    const pairs = (ts: readonly Trajectory[]): ReturnType<typeof resolvePairs> => resolvePairs(ts, buildPreferences(ts, { minMargin: 0.5 }).pairs);
    const dpo = await exportDataset({ format: 'dpo', trajectories: pool, out: path.join(dir, 'dpo.jsonl'), pairs, top: 5, tools });
    expect(dpo.records).toBe(5);
    const dpoRows = (await readJsonl(path.join(dir, 'dpo.jsonl'))).map((r) => DpoRecordSchema.parse(r));
    expect(dpoRows.every((r) => r.margin >= 0.5)).toBe(true);
    const rl = await exportDataset({ format: 'rl', trajectories: pool, out: path.join(dir, 'rl.jsonl'), tools });
    const rlRows = (await readJsonl(path.join(dir, 'rl.jsonl'))).map((r) => RlRecordSchema.parse(r));
    expect(rl.records).toBe(new Set(pool.map((t) => t.task.id)).size);
    expect(rlRows.reduce((a, r) => a + r.group_size, 0)).toBe(pool.length);
    const rlTop = await exportDataset({ format: 'rl', trajectories: pool, out: path.join(dir, 'rl-top.jsonl'), top: 3 });
    const topRows = (await readJsonl(path.join(dir, 'rl-top.jsonl'))).map((r) => RlRecordSchema.parse(r));
    expect(rlTop.records).toBe(3);
    const maxStd = Math.max(...rlRows.map((r) => r.reward_std));
    expect(topRows[0]?.reward_std).toBe(maxStd);
    // An episode that failed before its first step has nothing to train on: left out, and counted.
    const empty = { ...(random[0] as Trajectory), id: 'no-steps', steps: [] };
    const withEmpty = await exportDataset({ format: 'rl', trajectories: [...pool, empty], out: path.join(dir, 'rl-empty.jsonl'), tools });
    expect(withEmpty).toMatchObject({ input: pool.length + 1, records: rl.records, notes: { groups: rl.records, noSteps: 1 } });
    expect((await readJsonl(path.join(dir, 'rl-empty.jsonl'))).map((r) => RlRecordSchema.parse(r).group_size)).toEqual(rlRows.map((r) => r.group_size));
    // No records at all: an error that says why, and nothing written; `allowEmpty` writes the empty file.
    await expect(exportDataset({ format: 'sft', trajectories: [empty], out: path.join(dir, 'sft-empty.jsonl'), tools })).rejects.toThrow(
      'nothing to export: 1 trajectories in, 0 kept by the filters, 0 sft records (noSteps=1); nothing was written',
    );
    await expect(readFile(path.join(dir, 'sft-empty.jsonl'))).rejects.toThrow(/ENOENT/);
    const sftEmpty = await exportDataset({ format: 'sft', trajectories: [empty], out: path.join(dir, 'sft-empty.jsonl'), tools, allowEmpty: true });
    expect(sftEmpty).toMatchObject({ records: 0, notes: { noSteps: 1 } });
    const bench = await exportDataset({ format: 'benchmark', trajectories: pool, out: path.join(dir, 'bench.jsonl') });
    const benchRows = (await readJsonl(path.join(dir, 'bench.jsonl'))).map((r) => BenchmarkRecordSchema.parse(r));
    expect(benchRows.length).toBe(bench.records);
    expect(benchRows.every((r) => r.reference.actions.at(-1)?.tool === 'submit')).toBe(true);
  });
});
