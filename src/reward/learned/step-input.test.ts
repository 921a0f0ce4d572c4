import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requires } from '../../../tests/support/requires.js';
import { toolCallText } from '../../core/chat/prompt.js';
import { loadTokenizer } from '../../core/tokenizer.js';
import { makeTrajectory, parseTrajectory, type Trajectory } from '../../core/trajectory.js';
import { encodeStepInputs, renderStepInput, truncateIds } from './step-input.js';
import { defined } from '../../core/defined.js';
import { PACKAGE_ROOT } from '../../core/package-root.js';

const python = requires.python(['gymflow_trainer', 'transformers']);

/** A trajectory with the awkward cases: thoughts with Unicode whitespace, numbers JS and Python print differently, key order. */
function tricky(): Trajectory {
  const step = (index: number, tool: string, params: Record<string, unknown>, observation: string, thought?: string): Trajectory['steps'][number] => ({
    index,
    action: { tool, params },
    observation,
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1,
    ...defined({ thought }),
  });
  return makeTrajectory({
    task: { id: 't-1', domain: 'tool-use', instruction: 'Compute 0.1 + 0.2 — and say "why".\n\u00e9t\u00e9 \u{1F600}' },
    envId: 'gymflow/tool-use-v0',
    agent: { name: 'test' },
    steps: [
      step(0, 'calculator', { expression: '0.1+0.2', big: 1e21, tiny: 1.5e-7, round: 5, neg: -2.5e-10, huge: 1.2345678901234567e19 }, 'Result: 0.30000000000000004', '\u00a0 think\tfirst \n'),
      step(1, 'lookup', { z: [1, { b: null, a: true }], '\u{1F600}': 'x', '\uff61': 'y', é: '\u0001\n"' }, 'Error: <|im_end|> is not an entity'),
      step(2, 'submit', {}, 'Correct.', 'done'),
    ],
    outcome: { success: true, score: 1, terminated: true, truncated: false, reason: 'submitted' },
    metadata: {},
  });
}

function collect(agent: string, out: string): string {
  const r = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'gymflow.js'), 'collect', '--env', 'gymflow/tool-use-v0', '--agent', agent, '-n', '3', '--no-progress', '-o', out, '--store', join(tmpdir(), 'gymflow-step-input-store')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`gymflow collect failed:\n${r.stderr}`);
  return readFileSync(out, 'utf8');
}

describe('step input', () => {
  it('renders the instruction, then each step up to i with its tool result', () => {
    const t = tricky();
    const { head, tail } = renderStepInput(t, 1);
    expect(head).toBe(`<|im_start|>user\n${t.task.instruction}<|im_end|>\n`);
    expect(tail).toHaveLength(4);
    expect(tail[0]).toBe(`<|im_start|>assistant\nthink\tfirst\n\n${toolCallText('calculator', t.steps[0]!.action.params)}<|im_end|>\n`);
    expect(tail[3]).toBe('<|im_start|>tool\nError: <|im_end|> is not an entity<|im_end|>\n');
    expect(() => renderStepInput(t, 3)).toThrow(/position 3 is not a step of trajectory sha256:\w+ \(3 steps\)/);
  });

  it('truncates from the left and keeps the instruction', () => {
    expect(truncateIds([1, 2], [3, 4, 5], 5)).toEqual([1, 2, 3, 4, 5]);
    expect(truncateIds([1, 2], [3, 4, 5, 6], 5)).toEqual([1, 2, 4, 5, 6]);
    expect(truncateIds([1, 2, 3, 4], [5, 6, 7], 4)).toEqual([1, 2, 6, 7]);
  });

  python.it(
    'equals the trainer’s rendering, text and token ids, on real trajectories (byte and BPE tokenizers)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gymflow-step-input-'));
      const file = join(dir, 'trajectories.jsonl');
      const lines = [collect('expert', join(dir, 'e.jsonl')), collect('random', join(dir, 'r.jsonl'))].join('').trim().split('\n');
      lines.push(JSON.stringify(tricky()));
      writeFileSync(file, `${lines.join('\n')}\n`);
      const trajectories = lines.map((l, i) => parseTrajectory(JSON.parse(l), `trajectories.jsonl:${i + 1}`));
      expect(trajectories.length).toBe(7);
      const script = `
import json, sys
from gymflow_trainer import rm
from gymflow_trainer.tiny import build_tokenizer
d = sys.argv[1]
trajs = [json.loads(l) for l in open(d + "/trajectories.jsonl")]
out = {"text": [[(lambda h, t: h + "".join(t))(*rm.render_step(t, p)) for p in range(len(t["steps"]))] for t in trajs]}
for name, size in (("bytes", 0), ("bpe", 400)):
    tok = build_tokenizer(size)
    tok.save_pretrained(d + "/" + name)
    out[name] = {str(L): [rm.encode_trajectory(tok, t, L) for t in trajs] for L in (96, 4096)}
print(json.dumps(out))
`;
      const r = spawnSync(join(PACKAGE_ROOT, '.venv', 'bin', 'python'), ['-c', script, dir], { encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      const py = JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as { text: string[][] } & Record<'bytes' | 'bpe', Record<string, number[][][]>>;
      const text = trajectories.map((t) => t.steps.map((_, p) => {
        const { head, tail } = renderStepInput(t, p);
        return head + tail.join('');
      }));
      expect(text).toEqual(py.text);
      for (const name of ['bytes', 'bpe'] as const) {
        const tok = await loadTokenizer(join(dir, name));
        for (const L of [96, 4096]) {
          const ids = trajectories.map((t) => encodeStepInputs(tok, t, L));
          expect(ids, `${name} max_length ${L}`).toEqual(py[name][String(L)]);
          // when nothing is cut, the ids are the whole text's encoding
          if (L === 4096) trajectories.forEach((_, k) => ids[k]!.forEach((row, p) => expect(row).toEqual(tok.encode(text[k]![p]!))));
        }
      }
    },
    120_000,
  );
});
