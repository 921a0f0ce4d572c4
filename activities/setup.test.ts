/**
 * `preparePolicy` run as a real activity (the SDK's MockActivityEnvironment supplies the activity context):
 * a tiny model whose BPE learnt the environment's expert episodes, born with its prompt format.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect } from 'vitest';
import { registerBuiltinEnvs } from '../src/envs/register.js';
import type { PolicyState } from '../src/loop/status.js';
import { openWorkspace } from '../src/runtime/workspace.js';
import { checkoutTree } from '../src/hub/store/tree.js';
import { requires } from '../tests/support/requires.js';
import { createSetupActivities } from './setup.js';

const python = requires.python(['torch', 'transformers', 'tokenizers']);

python.describe('preparePolicy', () => {
  let root: string;
  beforeAll(async () => {
    registerBuiltinEnvs();
    root = await mkdtemp(path.join(tmpdir(), 'gymflow-setup-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  python.it('learns the tiny tokenizer from expert episodes and records the prompt format', async () => {
    const activities = createSetupActivities({ store: path.join(root, 'store'), workDir: path.join(root, 'work') });
    const tiny = { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, bpe_vocab_size: 600, system_prompt: 'drop' };
    const env = new MockActivityEnvironment();
    const withCorpus: PolicyState = await env.run(activities.preparePolicy, { experiment: 'x', env: 'gymflow/tool-use-v0', init: { tiny, tokenizer_corpus: 'expert' as const } });
    const builtin: PolicyState = await env.run(activities.preparePolicy, { experiment: 'y', env: 'gymflow/tool-use-v0', init: { tiny } });
    const { store } = await openWorkspace({ store: path.join(root, 'store'), workDir: path.join(root, 'work') });
    const vocab = async (ref: string | undefined, name: string): Promise<Record<string, number>> => {
      if (ref === undefined) throw new Error('no checkpoint ref');
      const dir = path.join(root, name);
      await checkoutTree(store, ref, dir);
      const config = JSON.parse(await readFile(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
      expect(config['gymflow_system_prompt']).toBe('drop');
      const tok = JSON.parse(await readFile(path.join(dir, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
      return tok.model.vocab;
    };
    // the environment's words (attributes, a tool) became single tokens; the built-in corpus has none of them
    const learnt = await vocab(withCorpus.checkpointRef, 'with');
    const plain = await vocab(builtin.checkpointRef, 'without');
    for (const word of ['population', 'founded', 'calculator']) {
      expect(Object.keys(learnt).some((t) => t.endsWith(word))).toBe(true);
      expect(Object.keys(plain).some((t) => t.endsWith(word))).toBe(false);
    }
  }, 180_000);

  python.it('learns it from the episodes of the agent tokenizer_corpus names (recall-v0\'s flawed demonstrator writes number words)', async () => {
    const activities = createSetupActivities({ store: path.join(root, 'store'), workDir: path.join(root, 'work') });
    const tiny = { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, bpe_vocab_size: 512, bpe_split_numbers: true, system_prompt: 'drop' };
    const env = new MockActivityEnvironment();
    const { store } = await openWorkspace({ store: path.join(root, 'store'), workDir: path.join(root, 'work') });
    const vocab = async (corpus: string): Promise<string[]> => {
      const state: PolicyState = await env.run(activities.preparePolicy, { experiment: `recall-${corpus}`, env: 'gymflow/recall-v0', init: { tiny, tokenizer_corpus: corpus } });
      if (state.checkpointRef === undefined) throw new Error('no checkpoint ref');
      const dir = path.join(root, `recall-${corpus}`);
      await checkoutTree(store, state.checkpointRef, dir);
      const tok = JSON.parse(await readFile(path.join(dir, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
      return Object.keys(tok.model.vocab);
    };
    const flawed = await vocab('flawed');
    const expert = await vocab('expert');
    for (const word of ['seven', 'three', 'eight']) {
      expect(flawed.some((t) => t.endsWith(word))).toBe(true);
      expect(expert.some((t) => t.endsWith(word))).toBe(false);
    }
    // an agent the environment does not register is named with the field, before anything is built
    const err = await env.run(activities.preparePolicy, { experiment: 'z', env: 'gymflow/recall-v0', init: { tiny, tokenizer_corpus: 'exprt' } }).catch((e: unknown) => e);
    expect((err as Error).message).toBe("pipeline config $.policy.init.tokenizer_corpus: gymflow/recall-v0 registers no agent 'exprt' to learn a tokenizer from (it registers: expert, flawed)");
  }, 180_000);
});
