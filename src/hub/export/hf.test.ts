import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requires } from '../../../tests/support/requires.js';
import { make } from '../../core/registry.js';
import type { Trajectory } from '../../core/trajectory.js';
import { registerBuiltinEnvs } from '../../envs/index.js';
import { buildPreferences } from '../../reward/preferences.js';
import { collect } from '../collect.js';
import type { ToolLookup } from '../../core/chat/tool-lookup.js';
import { resolveAgent } from '../../policy/specs.js';
import { resolvePairs } from './dpo.js';
import { exportDataset } from './export.js';
import { datasetCard, shardNames } from './hf.js';
import type { RecordFormat } from './schemas.js';
import { parseSplitSpec } from './select.js';
import { defined } from '../../core/defined.js';
import { PACKAGE_ROOT } from '../../core/package-root.js';

const tools: ToolLookup = (envId) => {
  const env = make(envId);
  void env.close();
  return env.tools;
};

let pool: Trajectory[] = [];
beforeAll(async () => {
  registerBuiltinEnvs();
  const a = await collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'expert', n: 20, groupSize: 2, concurrency: 4, seed: 2 });
  const b = await collect({ resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'random', n: 20, groupSize: 2, concurrency: 4, seed: 2, maxSteps: 4 });
  const c = await collect({ resolveAgent, envId: 'gymflow/text-math-v0', agent: 'expert', n: 10, concurrency: 2, seed: 2 });
  pool = [...a.trajectories, ...b.trajectories, ...c.trajectories];
});

async function exportHf(record: RecordFormat, shardSize?: number): Promise<string> {
  const out = path.join(await mkdtemp(path.join(tmpdir(), 'gymflow-hf-')), record);
  await exportDataset({
    format: 'hf',
    record,
    trajectories: pool,
    out,
    splits: parseSplitSpec('train=0.7,validation=0.15,test=0.15'),
    seed: 1,
    tools,
    ...defined({ shardSize }),
    ...(record === 'dpo' ? { pairs: (ts: readonly Trajectory[]) => resolvePairs(ts, buildPreferences(ts, { minMargin: 0.5 }).pairs) } : {}),
  });
  return out;
}

describe('hf layout', () => {
  it('writes shards per split and a card whose front matter maps splits to data files', async () => {
    const out = await exportHf('sft', 40);
    const files = (await readdir(path.join(out, 'data'))).sort();
    expect(files.some((f) => /^train-00000-of-0000[2-9]\.jsonl$/.test(f))).toBe(true);
    expect(files.every((f) => /^(train|validation|test)-\d{5}-of-\d{5}\.jsonl$/.test(f))).toBe(true);
    const card = await readFile(path.join(out, 'README.md'), 'utf8');
    expect(card.startsWith('---\nconfigs:\n  - config_name: default\n    data_files:\n      - split: train\n        path: data/train-*.jsonl\n')).toBe(true);
    expect(shardNames('train', 2)).toEqual(['data/train-00000-of-00002.jsonl', 'data/train-00001-of-00002.jsonl']);
    expect(datasetCard(new Map([['train', 3], ['test', 0]]), { record: 'sft' })).not.toContain('split: test');
  });
});

const python = requires.python(['datasets']);

python.describe('hf export read by the real `datasets` package', () => {
  const script = `
import json, sys
from datasets import load_dataset
ds = load_dataset(sys.argv[1])
out = {"splits": {k: v.num_rows for k, v in ds.items()}}
row = ds["train"][0]
out["columns"] = sorted(ds["train"].column_names)
out["row"] = row
out["features"] = {k: str(v) for k, v in ds["train"].features.items()}
print(json.dumps(out, default=str))
`;

  interface Loaded {
    splits: Record<string, number>;
    columns: string[];
    row: Record<string, unknown>;
    features: Record<string, string>;
  }

  function load(dir: string): Loaded {
    const py = path.join(PACKAGE_ROOT, '.venv', 'bin', 'python');
    const r = spawnSync(py, ['-c', script, dir], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, HF_DATASETS_OFFLINE: '1', HF_HUB_OFFLINE: '1', HF_HOME: path.join(dir, '..', '.hf-home') } });
    if (r.status !== 0) throw new Error(`load_dataset failed (${r.status}): ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as Loaded;
  }

  it('loads sft with its three splits, messages and tool calls', async () => {
    const out = await exportHf('sft', 40);
    const loaded = load(out);
    expect(Object.keys(loaded.splits).sort()).toEqual(['test', 'train', 'validation']);
    expect(Object.values(loaded.splits).reduce((a, b) => a + b, 0)).toBe(pool.length);
    expect(loaded.columns).toEqual(['agent', 'domain', 'env_id', 'messages', 'num_steps', 'outcome_reason', 'reward', 'success', 'task_id', 'tools', 'trajectory_id']);
    const messages = loaded.row.messages as { role: string; tool_calls: { function: { arguments: string } }[] | null; train: boolean }[];
    expect(messages[0]?.role).toBe('system');
    const assistant = messages.find((m) => m.role === 'assistant');
    expect(assistant?.train).toBeTypeOf('boolean');
    expect(JSON.parse(assistant?.tool_calls?.[0]?.function.arguments ?? 'null')).toBeTypeOf('object');
    // The declared features win over per-shard inference: whole-number rewards are still floats.
    expect(loaded.features.reward).toBe("Value('float64')");
    expect(loaded.features.num_steps).toBe("Value('int64')");
    // The first train row comes back exactly as written.
    const first = (await readFile(path.join(out, 'data', 'train-00000-of-00002.jsonl'), 'utf8')).split('\n')[0] as string;
    expect(loaded.row).toEqual(JSON.parse(first));
  }, 180_000);

  it('loads dpo, rl and benchmark records', async () => {
    for (const [record, column] of [['dpo', 'chosen'], ['rl', 'group'], ['benchmark', 'reference']] as const) {
      const loaded = load(await exportHf(record));
      expect(loaded.columns).toContain(column);
      expect(loaded.splits.train).toBeGreaterThan(0);
    }
  }, 300_000);
});
