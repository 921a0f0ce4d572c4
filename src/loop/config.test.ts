import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from './config.js';
import { loadPipelineConfig } from '../runtime/config-file.js';
import { defaultWorkflowId, iterationSeed, phaseOf, planShards, refsToPrune } from './plan.js';
import type { IterationMetrics } from './status.js';

const DEMO = `
name: demo
env: gymflow/tool-use-v0
policy:
  init: { tiny: { hidden_size: 32 } }
phases:
  - name: sft
    iterations: 1
    collect: { agent: expert, tasks: 8 }
    export: { success_only: true }
    train: { command: sft, config: { max_steps: 5 } }
  - name: rl
    collect: { agent: policy, group_size: 4 }
    train: { command: rl, config: { loss: { algorithm: grpo } } }
eval: { tasks: 10, baseline: true }
target: { metric: heldout_success, value: 0.9 }
max_iterations: 3
`;

async function file(text: string, name = 'loop.yaml'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-config-'));
  const p = path.join(dir, name);
  await writeFile(p, text);
  return p;
}

describe('pipeline configuration', () => {
  it('fills defaults and completes phases (the demo: SFT on expert data, then RL with the policy)', async () => {
    const c = await loadPipelineConfig(await file(DEMO));
    expect(c.task_queues).toEqual({ cpu: 'gymflow', gpu: 'gymflow-gpu' });
    expect(c.max_iterations).toBe(3);
    expect(c.phases.map((p) => [p.name, p.train.command, p.export.format, p.collect.agent])).toEqual([
      ['sft', 'sft', 'sft', 'expert'],
      ['rl', 'rl', 'rl', 'policy'],
    ]);
    expect(c.phases[1]?.collect.group_size).toBe(4);
    expect(c.eval).toMatchObject({ split: 'heldout', tasks: 10, repeats: 1, baseline: true, temperature: 0 });
    expect(phaseOf(c, 1).phase.name).toBe('sft');
    expect(phaseOf(c, 2).phase.name).toBe('rl');
    expect(phaseOf(c, 7).phase.name).toBe('rl');
  });

  it('takes top-level sections as one phase named main', () => {
    const c = parsePipelineConfig(
      { name: 'x', env: 'gymflow/tool-use-v0', policy: { init: { path: '/m' } }, collect: { agent: 'expert' }, train: { command: 'sft' }, max_iterations: 2 },
      'inline',
    );
    expect(c.phases).toHaveLength(1);
    expect(c.phases[0]?.name).toBe('main');
    expect(c.max_iterations).toBe(2);
  });

  it('names file, line and field of every problem', async () => {
    const bad = DEMO.replace('group_size: 4', 'group_size: 0').replace('agent: expert, tasks: 8', 'agent: expert, tasks: 8, bogus: 1');
    const p = await file(bad);
    const err = await loadPipelineConfig(p).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    const msg = (err as Error).message;
    expect(msg).toContain(`${p}:13 $.phases[1].collect.group_size`);
    expect(msg).toMatch(new RegExp(`${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:9 \\$\\.phases\\[0\\]\\.collect: .*bogus`));
    // A key in a block mapping: its own line, not the line of the mapping that holds it.
    const block = await file(`${DEMO}policy_note:\n  a: 1\n`.replace('eval: { tasks: 10, baseline: true }', 'eval:\n  tasks: 10\n  baseline: true\n  heldout: yes'));
    const blockMsg = ((await loadPipelineConfig(block).catch((e: unknown) => e)) as Error).message;
    expect(blockMsg).toContain(`${block}:21 $: Unrecognized key: "policy_note"`);
    expect(blockMsg).toContain(`${block}:18 $.eval: Unrecognized key: "heldout"`);
    // Found by the fuzzer (tests/fuzz): an empty file's problem had no line.
    const empty = ((await loadPipelineConfig(await file('\n# nothing here\n')).catch((e: unknown) => e)) as Error).message;
    expect(empty).toMatch(/:1 \$: Invalid input: expected object, received null/);
  });

  it('rejects cross-field mistakes: format vs command, reserved trainer keys, rl without groups, open middle phase', () => {
    const base = { name: 'x', env: 'e', policy: { init: { tiny: {} } } };
    const problems = (value: unknown): string => {
      try {
        parsePipelineConfig(value, 'inline');
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(problems({ ...base, phases: [{ name: 'a', iterations: 1, train: { command: 'sft' }, export: { format: 'rl' } }] })).toContain(
      "inline $.phases[0].export.format: export format 'rl' does not fit train command 'sft'",
    );
    expect(problems({ ...base, train: { command: 'sft', config: { output_dir: '/x' } }, max_iterations: 1 })).toContain("inline $.train.config.output_dir: 'output_dir' is set by the pipeline");
    expect(problems({ ...base, train: { command: 'rl' }, max_iterations: 1 })).toContain('inline $.collect.group_size: rl needs groups');
    expect(problems({ ...base, phases: [{ name: 'a', train: { command: 'sft' } }, { name: 'b', iterations: 1, train: { command: 'sft' } }] })).toContain(
      'inline $.phases[0].iterations: only the last phase may leave iterations out',
    );
    expect(problems({ ...base, phases: [{ name: 'a', iterations: 1 }] })).toContain('inline $.phases[0].train.command');
    expect(problems({ ...base, train: { command: 'sft' } })).toContain('inline $.max_iterations: give max_iterations');
    expect(problems({ ...base, name: 'has space', train: { command: 'sft' }, max_iterations: 1 })).toContain('inline $.name:');
    // The tokenizer corpus is an agent's name (the environment's registry is checked at setup, by checkConfig).
    const corpus = (name: unknown): unknown => ({ ...base, policy: { init: { tiny: {}, tokenizer_corpus: name } }, train: { command: 'sft' }, max_iterations: 1 });
    expect(problems(corpus('flawed'))).toBe('');
    expect(problems(corpus('local:/m'))).toContain('inline $.policy.init.tokenizer_corpus: expected the name of an agent the environment registers, e.g. expert');
    expect(problems(corpus(''))).toContain('inline $.policy.init.tokenizer_corpus:');
  });

  it('merges sections field by field: phase field > top-level field > schema default', () => {
    // The reported repro: the phase sets only group_size / command, the rest comes from the top level.
    const c = parsePipelineConfig(
      {
        name: 'x',
        env: 'gymflow/tool-use-v0',
        policy: { init: { tiny: {} } },
        collect: { agent: 'expert', tasks: 3 },
        export: { success_only: true, min_margin: 0.5 },
        train: { command: 'sft', timeout: '6h', config: { max_steps: 2 } },
        phases: [
          { name: 'a', iterations: 1, collect: { group_size: 1 }, train: { command: 'sft' } },
          { name: 'b', iterations: 1, collect: { agent: 'policy', temperature: 0.5 }, export: { success_only: false }, train: { command: 'sft', timeout: '1h', config: { epochs: 2 } } },
        ],
      },
      't',
    );
    const [a, b] = c.phases;
    // Top-level fields reach a phase that does not set them; schema defaults fill the rest.
    expect(a?.collect).toEqual({ agent: 'expert', split: 'train', tasks: 3, group_size: 1, shard_size: 8, shard_execution: 'activity', concurrency: 4, temperature: 1 });
    expect(a?.export).toEqual({ format: 'sft', success_only: true, dedup: false, min_margin: 0.5 });
    expect(a?.train).toEqual({ command: 'sft', config: { max_steps: 2 }, launcher: 'auto', timeout: '6h', heartbeat_timeout: '2m' });
    // A phase's own fields win over the top level (train.config is one field: replaced, not deep-merged).
    expect(b?.collect).toMatchObject({ agent: 'policy', tasks: 3, temperature: 0.5 });
    expect(b?.export).toMatchObject({ success_only: false, min_margin: 0.5 });
    expect(b?.train).toMatchObject({ timeout: '1h', config: { epochs: 2 } });
    // Without phases, the top-level sections make the one phase, defaults filled in.
    const main = parsePipelineConfig({ name: 'x', env: 'e', policy: { init: { tiny: {} } }, collect: { tasks: 5 }, train: { command: 'sft' }, max_iterations: 1 }, 't');
    expect(main.phases[0]?.collect).toMatchObject({ agent: 'policy', tasks: 5, shard_size: 8 });
    expect(main.phases[0]?.train).toMatchObject({ timeout: '24h', heartbeat_timeout: '2m', config: {} });
  });

  it('runs shards as activities unless collect.shard_execution says local', () => {
    const base = { name: 'x', env: 'e', policy: { init: { tiny: {} } }, train: { command: 'sft' }, max_iterations: 1 };
    const p = parsePipelineConfig({ ...base, collect: { agent: 'expert' }, phases: [{ name: 'a', iterations: 1, collect: { shard_execution: 'local' } }, { name: 'b' }] }, 't');
    expect(p.phases.map((phase) => phase.collect.shard_execution)).toEqual(['local', 'activity']);
    expect(() => parsePipelineConfig({ ...base, collect: { shard_execution: 'remote' } }, 't')).toThrow('t $.collect.shard_execution: Invalid option: expected one of "activity"|"local"');
  });

  it('gives env_kwargs to collection and evaluation: the top level to both, a section its own', () => {
    const base = { name: 'x', env: 'e', policy: { init: { tiny: {} } }, train: { command: 'sft' }, max_iterations: 1 };
    const user = { user: 'openai:sim@http://127.0.0.1:9/v1' };
    const top = parsePipelineConfig({ ...base, env_kwargs: user, phases: [{ name: 'a', iterations: 1 }, { name: 'b', collect: { env_kwargs: { user: 'scripted' } } }] }, 't');
    expect(top.phases.map((p) => p.collect.env_kwargs)).toEqual([user, { user: 'scripted' }]);
    expect(top.eval.env_kwargs).toEqual(user);
    const own = parsePipelineConfig({ ...base, env_kwargs: user, eval: { env_kwargs: {} } }, 't');
    expect(own.eval.env_kwargs).toEqual({});
    // Absent, the sections have no key at all (the activity inputs of earlier histories stay as they were).
    const none = parsePipelineConfig(base, 't');
    expect(none.phases[0]?.collect).not.toHaveProperty('env_kwargs');
    expect(none.eval).not.toHaveProperty('env_kwargs');
    expect(() => parsePipelineConfig({ ...base, env_kwargs: ['user'] }, 't')).toThrow('t $.env_kwargs: Invalid input: expected record, received array');
    expect(() => parsePipelineConfig({ ...base, eval: { env_kwargs: 'scripted' } }, 't')).toThrow('t $.eval.env_kwargs: Invalid input: expected record, received string');
  });

  it('takes eval.benchmarks: named environments with their own keyword arguments, split, tasks and trials', () => {
    const base = { name: 'x', env: 'e', policy: { init: { tiny: {} } }, train: { command: 'sft' }, max_iterations: 1, env_kwargs: { user: 'scripted' } };
    const hle = { name: 'hle', env: 'gymflow/qa-v0', env_kwargs: { questions: '/data/hle.jsonl', judge: 'openai:o3-mini' }, tasks: 50 };
    const c = parsePipelineConfig({ ...base, eval: { agent: 'expert', calibration_bins: 50, benchmarks: [hle, { name: 'math.v2', env: 'gymflow/text-math-v0', agent: 'policy', repeats: 2 }] } }, 't');
    expect(c.eval.benchmarks).toEqual([
      { ...hle, split: 'heldout', repeats: 1 },
      { name: 'math.v2', env: 'gymflow/text-math-v0', agent: 'policy', split: 'heldout', repeats: 2 },
    ]);
    expect(c.eval.calibration_bins).toBe(50);
    // Absent, the section has no key (the configurations of earlier histories parse as they did).
    expect(parsePipelineConfig(base, 't').eval).not.toHaveProperty('benchmarks');
    expect(() => parsePipelineConfig({ ...base, eval: { benchmarks: [hle, { ...hle, env: 'gymflow/text-math-v0' }] } }, 't')).toThrow("t $.eval.benchmarks[1].name: benchmark name 'hle' is used twice");
    expect(() => parsePipelineConfig({ ...base, eval: { benchmarks: [{ ...hle, name: 'h/le' }] } }, 't')).toThrow('t $.eval.benchmarks[0].name: expected a name of letters, digits, ., _, -');
    expect(() => parsePipelineConfig({ ...base, eval: { benchmarks: [{ ...hle, temperature: 0.5 }] } }, 't')).toThrow('t $.eval.benchmarks[0]: Unrecognized key: "temperature"');
    expect(() => parsePipelineConfig({ ...base, eval: { benchmarks: [] } }, 't')).toThrow('t $.eval.benchmarks: Too small');
  });

  it('takes train.heartbeat_timeout as a duration of at least 10 s, from the top level or the phase', () => {
    const base = { name: 'x', env: 'e', policy: { init: { tiny: {} } }, max_iterations: 1 };
    const c = parsePipelineConfig({ ...base, train: { command: 'sft', heartbeat_timeout: '10s' } }, 't');
    expect(c.phases[0]?.train.heartbeat_timeout).toBe('10s');
    const p = parsePipelineConfig({ ...base, train: { command: 'sft', heartbeat_timeout: '30s' }, phases: [{ name: 'a', train: { heartbeat_timeout: '1m' } }] }, 't');
    expect(p.phases[0]?.train.heartbeat_timeout).toBe('1m');
    expect(() => parsePipelineConfig({ ...base, train: { command: 'sft', heartbeat_timeout: 'soon' } }, 't')).toThrow("t $.train.heartbeat_timeout: expected a duration like '90s'");
    expect(() => parsePipelineConfig({ ...base, train: { command: 'sft', heartbeat_timeout: '5s' } }, 't')).toThrow(/t \$\.train\.heartbeat_timeout: .*at least 10s/);
  });

  it('reports invalid YAML with its line', async () => {
    const p = await file('name: x\nenv: [unclosed\n');
    await expect(loadPipelineConfig(p)).rejects.toThrow(new RegExp(`${path.basename(p)}:\\d+: not valid YAML`));
  });

  it('reports an alias with no anchor as invalid YAML with its line, not a crash', async () => {
    const p = await file('name: x\nenv: *nowhere\n');
    await expect(loadPipelineConfig(p)).rejects.toThrow(new RegExp(`${path.basename(p)}:2: not valid YAML: alias \\*nowhere has no anchor`));
  });
});

describe('pass planning', () => {
  it('cuts task orders into shards with distinct seeds', () => {
    const shards = planShards(['a', 'b', 'c', 'd', 'e'], 2, 7);
    expect(shards.map((s) => s.tasks)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(new Set(shards.map((s) => s.seed)).size).toBe(3);
    expect(iterationSeed(0, 1)).not.toBe(iterationSeed(0, 2));
  });

  it('lets go of the models of all but the most recent and the best iterations', () => {
    const it_ = (iteration: number, success: number, refs: IterationMetrics['refs']): IterationMetrics => ({
      iteration,
      phase: 'p',
      algorithm: 'sft',
      success: { value: success, low: 0, high: 1, n: 10 },
      wallMs: 1,
      refs,
    });
    const history = [
      it_(0, 0, { checkpoint: 'c0', policy: 'p0', eval: 'e0' }),
      it_(1, 0.9, { checkpoint: 'c1', policy: 'p1' }),
      it_(2, 0.5, { checkpoint: 'c2', policy: 'p2' }),
      it_(3, 0.6, { checkpoint: 'c3' }),
      it_(4, 0.7, { checkpoint: 'c4', policy: 'p4' }),
    ];
    expect(refsToPrune(history, { keep_last: 2, keep_best: true })).toEqual(['c0', 'p0', 'c2', 'p2']);
    expect(refsToPrune(history, { keep_last: 2, keep_best: false })).toEqual(['c0', 'p0', 'c1', 'p1', 'c2', 'p2']);
    expect(refsToPrune(history, { keep_last: 5, keep_best: true })).toEqual([]);
    // A model a kept iteration also names (an iteration that did not change the policy) stays.
    expect(refsToPrune([it_(1, 0.1, { checkpoint: 'c1', policy: 'p1' }), it_(2, 0.2, { checkpoint: 'c1', policy: 'p2' })], { keep_last: 1, keep_best: false })).toEqual(['p1']);
    const minimal = { name: 'x', env: 'e', policy: { init: { tiny: {} } }, train: { command: 'sft' }, max_iterations: 1 };
    expect(parsePipelineConfig({ ...minimal, retention: { keep_last: 2 } }, 'inline').retention).toEqual({ keep_last: 2, keep_best: true });
    expect(() => parsePipelineConfig({ ...minimal, retention: { keep_last: 0 } }, 'inline')).toThrow(/inline \$\.retention\.keep_last: /);
  });

  it('formats default workflow ids', () => {
    expect(defaultWorkflowId('demo', new Date(Date.UTC(2025, 0, 2, 3, 4, 5)))).toBe('demo-20250102-030405');
  });
});
