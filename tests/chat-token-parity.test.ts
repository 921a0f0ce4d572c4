import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { AgentContext } from '../src/core/agent.js';
import { type ChatMLMessage, renderChatML } from '../src/core/chat/chatml.js';
import { registryToolLookup } from '../src/core/chat/tool-lookup.js';
import { make } from '../src/core/registry.js';
import { runEpisode } from '../src/core/rollout.js';
import { loadTokenizer } from '../src/core/tokenizer.js';
import type { Trajectory } from '../src/core/trajectory.js';
import type { ToolSpec } from '../src/core/types.js';
import { registerBuiltinEnvs } from '../src/envs/register.js';
import type { SftRecord } from '../src/hub/export/schemas.js';
import { toSftRecord } from '../src/hub/export/sft.js';
import { contextPrompt, renderContext } from '../src/policy/chat-format.js';
import { resolveAgent } from '../src/policy/specs.js';
import { requires } from './support/requires.js';

// The prompt a local policy renders and tokenizes in TypeScript must be, text and token ids, what the
// trainer renders (gymflow_trainer.chat.render) and tokenizes (gymflow_trainer.data.load_sft) for the SFT
// record of the same episode. Both sides run for real here; a change of format on either side fails.

const python = requires.python(['tokenizers', 'transformers', 'gymflow_trainer']);
const ENV = 'gymflow/tool-use-v0';

interface PySide {
  /** render(messages) of the whole record. */
  full_text: string;
  /** load_sft(...)[0].input_ids: what SFT trains on. */
  full_ids: number[];
  /** render(messages[:2 + 2k], add_generation_prompt=True) per step k, and its ids. */
  prompts: { text: string; ids: number[] }[];
}

const PY_SCRIPT = `
import json, sys
from transformers import AutoTokenizer
from gymflow_trainer.chat import render
from gymflow_trainer.data import load_sft, read_jsonl, _plain
from gymflow_trainer.tiny import build_tokenizer
sft_path, tok_dir, bpe = sys.argv[1], sys.argv[2], int(sys.argv[3])
build_tokenizer(bpe).save_pretrained(tok_dir)
tok = AutoTokenizer.from_pretrained(tok_dir)
msgs = _plain(read_jsonl(sft_path)[0]["messages"])
full_text, _ = render(msgs)
examples = load_sft(sft_path, tok, max_length=1 << 20)
assert len(examples) == 1, len(examples)
steps = (len(msgs) - 1) // 2
prompts = []
for k in range(steps):
    text, _ = render(msgs[: 2 + 2 * k], add_generation_prompt=True)
    prompts.append({"text": text, "ids": tok.encode(text, add_special_tokens=False)})
print(json.dumps({"full_text": full_text, "full_ids": examples[0].input_ids, "prompts": prompts}))
`;
import { PACKAGE_ROOT } from '../src/core/package-root.js';

function pythonSide(sftPath: string, bpe: number): { tokDir: string; out: PySide } {
  const tokDir = mkdtempSync(join(tmpdir(), 'gymflow-parity-tok-'));
  const r = spawnSync(join(PACKAGE_ROOT, '.venv', 'bin', 'python'), ['-c', PY_SCRIPT, sftPath, tokDir, String(bpe)], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`python side failed:\n${r.stderr}`);
  return { tokDir, out: JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as PySide };
}

/** The context a policy sees before step k of a recorded episode, and the notes it kept (its thoughts). */
function contextAt(t: Trajectory, tools: readonly ToolSpec[], k: number): AgentContext {
  return {
    task: { id: t.task.id, domain: t.task.domain, instruction: t.task.instruction },
    tools,
    observation: k === 0 ? '' : (t.steps[k - 1]?.observation ?? ''),
    history: t.steps.slice(0, k).map((s) => ({ action: s.action, observation: s.observation, info: {} })),
    stepIndex: k,
  };
}

python.describe('chat format and token ids: TypeScript rollout prompt = Python SFT text', () => {
  let trajectory: Trajectory;
  let tools: readonly ToolSpec[];
  let record: SftRecord;
  let sftPath: string;

  beforeAll(async () => {
    registerBuiltinEnvs();
    const env = make(ENV);
    tools = env.tools;
    trajectory = await runEpisode(env, resolveAgent('expert', ENV, { seed: 5 }), { envId: ENV, seed: 5 });
    await env.close();
    // Thoughts as a model writes them: padded, multi-line, unicode; one step without a thought.
    trajectory.steps.forEach((s, i) => {
      if (i !== 1) s.thought = `  Step ${i}: I’ll look this up — “naïve” approach 🔍\nthen call a tool.  `;
    });
    record = toSftRecord(trajectory, registryToolLookup());
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-parity-'));
    sftPath = join(dir, 'sft.jsonl');
    writeFileSync(sftPath, `${JSON.stringify(record)}\n`);
  });

  it('the expert episode is a real multi-step tool-use conversation', () => {
    expect(trajectory.steps.length).toBeGreaterThanOrEqual(2);
    expect(record.messages.map((m) => m.role)).toEqual(['system', 'user', ...trajectory.steps.flatMap((_, i) => (i < trajectory.steps.length - 1 ? ['assistant', 'tool'] : ['assistant']))]);
    expect(record.messages.some((m) => m.content.includes('<tool_call>'))).toBe(true);
  });

  for (const [name, bpe] of [
    ['byte-level tokenizer', 0],
    ['BPE tokenizer (vocab 400)', 400],
  ] as const) {
    it(`${name}: same text and ids for every step's prompt and for the whole record`, async () => {
      const { tokDir, out } = pythonSide(sftPath, bpe);
      const tok = await loadTokenizer(tokDir);

      // The exported record rendered in TypeScript is the trainer's text, and tokenizes to its ids.
      const tsFull = renderChatML(record.messages.map((m): ChatMLMessage => ({ role: m.role, content: m.content })));
      expect(tsFull).toBe(out.full_text);
      expect(tok.encode(tsFull)).toEqual(out.full_ids);

      // Each step's rollout prompt (what local:DIR feeds the model) is the trainer's prefix + generation
      // prompt, with the same ids, and those ids are a prefix of the SFT sequence: the policy continues
      // exactly the token sequence SFT trained it on.
      const notes = trajectory.steps.map((s) => (s.thought !== undefined ? { thought: s.thought } : undefined));
      expect(out.prompts).toHaveLength(trajectory.steps.length);
      out.prompts.forEach((p, k) => {
        const prompt = contextPrompt(renderContext(ENV, contextAt(trajectory, tools, k), notes));
        expect(prompt, `step ${k} text`).toBe(p.text);
        const ids = tok.encode(prompt);
        expect(ids, `step ${k} ids`).toEqual(p.ids);
        expect(out.full_ids.slice(0, ids.length), `step ${k} prefix of the SFT ids`).toEqual(ids);
      });
    });
  }
});
