import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';
import { checkoutArtifact } from './checkout.js';
import { eachBackend } from './__fixtures__/backends.js';
import { loadTrajectories, putTrajectories } from './trajectory-set.js';
import { putTree } from './tree.js';
import { objectPath } from './layout.js';

/** `objects/ab/cdef…`, an object's store-relative key. */
function objectKey(ref: string): string {
  return path.relative('/', objectPath('/', ref));
}

async function tmp(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `gymflow-${prefix}-`));
}

eachBackend('checkoutArtifact', (backend) => {
  it('writes a tree as a directory, a trajectory set as JSONL trajectories, anything else byte for byte', async () => {
    const store = await backend.open();
    const dir = await tmp('co-src');
    await mkdir(path.join(dir, 'sub'));
    await writeFile(path.join(dir, 'model.onnx'), 'weights');
    await writeFile(path.join(dir, 'sub', 'tokenizer.json'), '{}');
    const tree = await putTree(store, dir, { kind: 'policy' });
    const blob = await store.putFile(path.join(dir, 'model.onnx'), { kind: 'blob' });
    // Two equal episodes share one behaviour object: the checkout still writes both.
    const trajectories = [fakeTrajectory({ task: 'a' }), fakeTrajectory({ task: 'b', success: false }), fakeTrajectory({ task: 'a' })];
    const set = await putTrajectories(store, trajectories, { kind: 'trajectories' });
    const out = await tmp('co-out');

    expect(await checkoutArtifact(store, tree.ref, path.join(out, 'policy'))).toMatchObject({ entry: { ref: tree.ref, kind: 'policy' }, files: 2, bytes: 9 });
    expect(await readFile(path.join(out, 'policy', 'sub', 'tokenizer.json'), 'utf8')).toBe('{}');
    expect(await checkoutArtifact(store, blob.ref, path.join(out, 'deeper', 'model.onnx'))).toMatchObject({ files: 1, bytes: 7 });
    expect(await readFile(path.join(out, 'deeper', 'model.onnx'), 'utf8')).toBe('weights');

    const jsonl = path.join(out, 'rollouts.jsonl');
    const written = await checkoutArtifact(store, set.ref, jsonl);
    const text = await readFile(jsonl, 'utf8');
    expect(written).toMatchObject({ files: 1, trajectories: 3, bytes: Buffer.byteLength(text) });
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual(JSON.parse(JSON.stringify(await loadTrajectories(store, set.ref))));
    expect(lines.map((t) => (t as { task: { id: string } }).task.id)).toEqual(['a', 'b', 'a']);
  });

  it('never writes over an existing path, and leaves nothing behind when an object is missing', async () => {
    const store = await backend.open();
    const dir = await tmp('co-src');
    await writeFile(path.join(dir, 'model.onnx'), 'weights');
    const tree = await putTree(store, dir, { kind: 'policy' });
    const blob = await store.putFile(path.join(dir, 'model.onnx'), { kind: 'blob' });
    const set = await putTrajectories(store, [fakeTrajectory()], { kind: 'trajectories' });
    const out = await tmp('co-out');
    const file = path.join(out, 'model.onnx');
    await writeFile(file, 'mine');
    await mkdir(path.join(out, 'empty'));

    // A file or a directory, even an empty one, is refused and left as it was.
    for (const [ref, dest] of [[blob.ref, file], [tree.ref, file], [set.ref, file], [tree.ref, path.join(out, 'empty')]] as const) {
      await expect(checkoutArtifact(store, ref, dest)).rejects.toThrow(new RegExp(`${dest} already exists`));
    }
    expect(await readFile(file, 'utf8')).toBe('mine');
    expect(await readdir(path.join(out, 'empty'))).toEqual([]);

    await backend.rawDelete(store, objectKey(blob.ref));
    await expect(checkoutArtifact(store, blob.ref, path.join(out, 'gone.onnx'))).rejects.toThrow(/is not in store/);
    await expect(checkoutArtifact(store, `sha256:${'0'.repeat(64)}`, path.join(out, 'nothing'))).rejects.toThrow(/is not in store/);
    expect((await readdir(out)).sort()).toEqual(['empty', 'model.onnx']);
  });
});
