import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';
import { checkoutArtifact } from './checkout.js';
import { manifestMembers } from './manifests.js';
import type { ArtifactStore } from './store.js';
import { eachBackend } from './__fixtures__/backends.js';
import { loadTrajectories, putTrajectories } from './trajectory-set.js';
import { checkoutTree, putTree } from './tree.js';

eachBackend('pruning an artifact', (backend) => {
  let root: string;
  let store: ArtifactStore;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'gymflow-prune-'));
    store = await backend.open();
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** A checkpoint directory: its own weights and a tokenizer every iteration shares. */
  const checkpoint = async (name: string, weights: string): Promise<string> => {
    const dir = path.join(root, name);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'model.safetensors'), weights);
    await writeFile(path.join(dir, 'tokenizer.json'), '{"shared": true}');
    return dir;
  };

  it('releases an old iteration’s files at gc; its entry, name and lineage stay, shared files stay', async () => {
    const first = await putTree(store, await checkpoint('c1', 'weights of iteration 1'), { kind: 'checkpoint', name: 'exp/iter-1/checkpoint' });
    const second = await putTree(store, await checkpoint('c2', 'weights of iteration 2'), { kind: 'checkpoint', name: 'exp/iter-2/checkpoint', parents: [first.ref] });
    expect((await store.gc({ graceMs: 0 })).deletedObjects).toBe(0);

    const { entry, already } = await store.prune(first.ref);
    expect(already).toBe(false);
    expect(entry.prunedAt).toEqual(expect.any(String));
    expect((await store.prune('sha256:' + first.ref.slice(7))).already).toBe(true);

    const report = await store.gc({ graceMs: 0 });
    // Only iteration 1's weights: the manifest and the shared tokenizer are kept.
    expect(report.deletedObjects).toBe(1);
    expect(report.freedBytes).toBe('weights of iteration 1'.length);
    expect(report.deletedArtifacts).toEqual([]);
    expect(await store.getRef('exp/iter-1/checkpoint')).toBe(first.ref);
    const lineage = await store.lineage(second.ref);
    expect(lineage.parents[0]?.entry?.prunedAt).toBe(entry.prunedAt);
    expect(await store.verify()).toMatchObject({ ok: true, problems: [] });

    // Reading it says what happened; the other iteration reads as before.
    const pruned = new RegExp(`artifact ${first.ref} \\(exp/iter-1/checkpoint\\) was pruned at ${entry.prunedAt}`);
    await expect(checkoutTree(store, first.ref, path.join(root, 'out1'))).rejects.toThrow(pruned);
    await expect(checkoutArtifact(store, first.ref, path.join(root, 'out1'))).rejects.toThrow(pruned);
    await checkoutTree(store, second.ref, path.join(root, 'out2'));
  });

  it('releases a trajectory set’s trajectories and a plain artifact’s bytes', async () => {
    const set = await putTrajectories(store, [fakeTrajectory({ task: 't1' }), fakeTrajectory({ task: 't2', success: false })], { name: 'exp/iter-1/rollouts' });
    const blob = await store.putBytes('{"rows": 1}\n', { kind: 'dataset', name: 'exp/iter-1/dataset', parents: [set.ref] });
    const members = [...new Set(manifestMembers('trajectory-set', await store.getText(set.ref), set.ref))];
    expect(members.length).toBeGreaterThan(0);
    await store.prune(set.ref);
    await store.prune(blob.ref);
    const report = await store.gc({ graceMs: 0 });
    // The trajectories' member objects and the dataset's bytes; the set's manifest stays.
    expect(report.deletedObjects).toBe(members.length + 1);
    for (const m of members) expect(await store.hasObject(m)).toBe(false);
    expect(await store.hasObject(set.ref)).toBe(true);
    expect(await store.hasObject(blob.ref)).toBe(false);
    expect(await store.has(blob.ref)).toBe(true);
    expect(await store.verify()).toMatchObject({ ok: true, problems: [] });
    await expect(loadTrajectories(store, set.ref)).rejects.toThrow(/\(exp\/iter-1\/rollouts\) was pruned at/);
    await expect(checkoutArtifact(store, blob.ref, path.join(root, 'd.jsonl'))).rejects.toThrow(/\(exp\/iter-1\/dataset\) was pruned at/);
  });

  it('is undone by storing the same content again', async () => {
    const dir = await checkpoint('c1', 'weights');
    const first = await putTree(store, dir, { kind: 'checkpoint', name: 'exp/iter-1/checkpoint' });
    await store.prune(first.ref);
    const again = await putTree(store, dir, { kind: 'checkpoint' });
    expect(again.ref).toBe(first.ref);
    expect(again.prunedAt).toBeUndefined();
    expect((await store.stat(first.ref)).prunedAt).toBeUndefined();
    expect((await store.gc({ graceMs: 0 })).deletedObjects).toBe(0);
    await checkoutTree(store, first.ref, path.join(root, 'out'));
  });
});
