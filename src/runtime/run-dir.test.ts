import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArtifactStore } from '../hub/store/store.js';
import { putTree } from '../hub/store/tree.js';
import { releaseRunDir, STORED_RESULT_FILE, storedTrainResult, tensorboardDirs, tensorboardRunDir, type StoredTrainResult } from './run-dir.js';

describe('a train run directory after its checkpoint is stored', () => {
  let root: string;
  let store: ArtifactStore;
  let runDir: string;
  let outputDir: string;
  let result: StoredTrainResult;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'gymflow-run-dir-'));
    store = await ArtifactStore.open({ root: path.join(root, 'store') });
    runDir = path.join(root, 'run');
    outputDir = path.join(runDir, 'output');
    // What a trainer leaves: step checkpoints with optimizer state, and the final model.
    for (const d of ['checkpoint-4', 'checkpoint-8', 'final']) {
      await mkdir(path.join(outputDir, d), { recursive: true });
      await writeFile(path.join(outputDir, d, d === 'final' ? 'model.safetensors' : 'trainer_state.pt'), d);
    }
    await writeFile(path.join(runDir, 'sft.json'), '{}');
    const entry = await putTree(store, path.join(outputDir, 'final'), { kind: 'checkpoint', name: 'x/iter-1/checkpoint' });
    result = { checkpointRef: entry.ref, loss: 0.25, steps: 8, wallMs: 1234, resumedFrom: null, attempt: 1 };
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('records the result, deletes the checkpoints, keeps the trainer config; a retry reads the record back', async () => {
    expect(await storedTrainResult(runDir, store)).toEqual({});
    await releaseRunDir(runDir, outputDir, result);
    expect((await readdir(runDir)).sort()).toEqual(['sft.json', STORED_RESULT_FILE]);
    expect(await storedTrainResult(runDir, store)).toEqual({ result });
    // The stored model is untouched by the clean-up.
    expect(await store.has(result.checkpointRef)).toBe(true);
  });

  it("keeps an RL result's entropy, rollout gap and cut samples (earlier versions wrote the record above, without them)", async () => {
    const rl = { ...result, entropy: 1.5, mismatchKl: 2e-9, cutSamples: 3 };
    await releaseRunDir(runDir, outputDir, rl);
    expect(await storedTrainResult(runDir, store)).toEqual({ result: rl });
  });

  it('does not trust a record whose checkpoint left the store', async () => {
    await releaseRunDir(runDir, outputDir, { ...result, checkpointRef: `sha256:${'a'.repeat(64)}` });
    const got = await storedTrainResult(runDir, store);
    expect(got.result).toBeUndefined();
    expect(got.problem).toBe(`${path.join(runDir, STORED_RESULT_FILE)}: its checkpoint sha256:${'a'.repeat(64)} is no longer in the store`);
  });

  it('names the file and what is wrong with a damaged record', async () => {
    const file = path.join(runDir, STORED_RESULT_FILE);
    await writeFile(file, '{"checkpointRef": ');
    expect((await storedTrainResult(runDir, store)).problem).toMatch(new RegExp(`^${file}: not JSON \\(`));
    await writeFile(file, JSON.stringify({ ...result, steps: -1 }));
    expect((await storedTrainResult(runDir, store)).problem).toMatch(new RegExp(`^${file}: not a stored train result \\(\\$\\.steps: `));
  });
});

describe('tensorboardRunDir', () => {
  it('gives each experiment and iteration a run of its own under the configured directory', () => {
    expect(tensorboardRunDir({ tensorboard_dir: '/data/tb' }, 'demo', 3, 'rl')).toBe(path.join('/data/tb', 'demo', 'iter-3-rl'));
    expect(tensorboardRunDir({ tensorboard_dir: 'tb', epochs: 2 }, 'demo', 1, 'sft')).toBe(path.join(process.cwd(), 'tb', 'demo', 'iter-1-sft'));
    // an experiment name is one directory, whatever it holds
    expect(tensorboardRunDir({ tensorboard_dir: '/data/tb' }, 'team/exp 1', 2, 'dpo')).toBe(path.join('/data/tb', 'team_exp_1', 'iter-2-dpo'));
  });

  it('lists the directories of a configuration’s phases once each, for tensorboard --logdir', () => {
    const phase = (config: Record<string, unknown>): { train: { config: Record<string, unknown> } } => ({ train: { config } });
    const config = { phases: [phase({ tensorboard_dir: 'tb' }), phase({ tensorboard_dir: './tb' }), phase({}), phase({ tensorboard_dir: '/data/tb' })] };
    expect(tensorboardDirs(config)).toEqual([path.join(process.cwd(), 'tb'), '/data/tb']);
    expect(tensorboardDirs({ phases: [phase({ epochs: 1 })] })).toEqual([]);
  });

  it('leaves a configuration without a directory, or with a wrong one, to the trainer', () => {
    for (const v of [undefined, null, '', 3, ['tb']]) expect(tensorboardRunDir({ tensorboard_dir: v }, 'demo', 1, 'sft')).toBeUndefined();
    expect(tensorboardRunDir({}, 'demo', 1, 'sft')).toBeUndefined();
  });
});
