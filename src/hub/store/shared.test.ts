import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { RefConflictError } from '../errors.js';
import { eachBackend } from './__fixtures__/backends.js';
import { PreconditionFailed } from './s3.js';
import type { S3Backend } from './s3-backend.js';
import { checkoutTree, putTree } from './tree.js';
import { loadTrajectories, putTrajectories } from './trajectory-set.js';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';

/**
 * A store shared by several writers and hosts (docs/store.md, "Refs", "S3 backend"): what one handle writes another
 * reads, and concurrent updates of one name never overwrite each other silently.
 */
eachBackend('a store shared by several writers', (backend) => {
  it('a reader with a fresh cache gets the bytes, trees and names a writer with another cache stored', async () => {
    const writer = await backend.open({ cacheDir: await mkdtemp(path.join(tmpdir(), 'gymflow-cache-a-')) });
    const cacheB = await mkdtemp(path.join(tmpdir(), 'gymflow-cache-b-'));
    const reader = await backend.reopen(writer, { cacheDir: cacheB });
    const blob = await writer.putBytes('a trajectory\n', { kind: 'blob', name: 'runs/blob' });
    const src = await mkdtemp(path.join(tmpdir(), 'gymflow-tree-'));
    await writeFile(path.join(src, 'weights.bin'), Buffer.alloc(3 * 1024 * 1024, 7));
    await writeFile(path.join(src, 'config.json'), '{"layers":2}');
    const tree = await putTree(writer, src, { kind: 'checkpoint', name: 'runs/ckpt' });

    expect(await reader.getRef('runs/blob')).toBe(blob.ref);
    expect((await reader.get(blob.ref)).toString()).toBe('a trajectory\n');
    expect(await reader.resolve('runs/ckpt')).toBe(tree.ref);
    const out = path.join(await mkdtemp(path.join(tmpdir(), 'gymflow-out-')), 'ckpt');
    await checkoutTree(reader, tree.ref, out);
    expect((await readdir(out)).sort()).toEqual(['config.json', 'weights.bin']);
    expect((await reader.lineage(tree.ref)).names).toEqual(['runs/ckpt']);
    const set = await putTrajectories(writer, [fakeTrajectory({ task: 'a' }), fakeTrajectory({ task: 'b' })], { name: 'runs/set' });
    expect((await loadTrajectories(reader, set.ref)).map((t) => t.task.id)).toEqual(['a', 'b']);
    if (backend.name === 's3') {
      // The reader's cache now holds what it read, keyed by content hash: the blob, the tree's three objects…
      const shards = await readdir(path.join(cacheB, 'objects'));
      let cached = 0;
      for (const s of shards) cached += (await readdir(path.join(cacheB, 'objects', s))).length;
      expect(cached).toBe(7); // …and the set's manifest and two behaviour objects
      expect(reader.root).toBe(cacheB);
      expect(reader.location).toBe(writer.location);
    }
    // The reader's own write is seen by the writer.
    const back = await reader.putJson({ from: 'reader' }, { kind: 'eval', parents: [tree.ref], name: 'runs/eval' });
    expect(await writer.getJson((await writer.getRef('runs/eval')) as string)).toEqual({ from: 'reader' });
    expect((await writer.verify()).ok).toBe(true);
    expect((await writer.lineage(back.ref)).parents[0]?.entry?.kind).toBe('checkpoint');
  });

  it('two concurrent updates of one name: one wins, the other gets a conflict naming the name', async () => {
    const a = await backend.open();
    const b = await backend.reopen(a);
    const base = await a.putBytes('v0', { kind: 'blob', name: 'exp/latest' });
    const x = await a.putBytes('v1 from a', { kind: 'blob' });
    const y = await b.putBytes('v1 from b', { kind: 'blob' });
    for (let round = 0; round < 5; round++) {
      await a.setRef('exp/latest', base.ref);
      const results = await Promise.allSettled([a.setRef('exp/latest', x.ref, { expect: base.ref }), b.setRef('exp/latest', y.ref, { expect: base.ref })]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]).toBeInstanceOf(RefConflictError);
      expect((lost[0] as Error).message).toMatch(/^conflict on ref 'exp\/latest' in store .*nothing was overwritten/);
      const winner = results[0]?.status === 'fulfilled' ? x.ref : y.ref;
      expect(await a.getRef('exp/latest')).toBe(winner);
      expect(await b.getRef('exp/latest')).toBe(winner);
    }
  });

  it('a conditional update against a stale target, or a create of a taken name, fails and changes nothing', async () => {
    const a = await backend.open();
    const b = await backend.reopen(a);
    const one = await a.putBytes('one', { kind: 'blob', name: 'model' });
    const two = await b.putBytes('two', { kind: 'blob' });
    const three = await a.putBytes('three', { kind: 'blob' });
    await b.setRef('model', two.ref, { expect: one.ref });
    const stale = await a.setRef('model', three.ref, { expect: one.ref }).catch((err: unknown) => err);
    expect(stale).toBeInstanceOf(RefConflictError);
    expect(stale).toMatchObject({ refName: 'model', expected: one.ref, actual: two.ref });
    expect((stale as Error).message).toContain(`expected ${one.ref.slice(0, 19)}, it names ${two.ref.slice(0, 19)}`);
    await expect(a.putBytes('four', { kind: 'blob', name: 'model', expectRef: null })).rejects.toThrow(/conflict on ref 'model'.*expected no target/);
    expect(await a.getRef('model')).toBe(two.ref);
    // Naming what the name already names is no conflict (a retried step).
    await a.setRef('model', two.ref, { expect: one.ref });
    await a.putBytes('fresh', { kind: 'blob', name: 'fresh', expectRef: null });
    expect(await b.getRef('fresh')).toBeDefined();
  });

  if (backend.name === 's3') it('the server refuses a create of an existing key (If-None-Match) and a replace of a changed one (If-Match)', async () => {
    const store = await backend.open();
    const bucket = (store.backend as S3Backend).bucket;
    await bucket.putBytes('probe', 'one', { ifNoneMatch: '*' });
    await expect(bucket.putBytes('probe', 'two', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailed);
    const first = await bucket.getBytes('probe');
    await bucket.putBytes('probe', 'three', { ifMatch: first?.etag as string });
    await expect(bucket.putBytes('probe', 'four', { ifMatch: first?.etag as string })).rejects.toBeInstanceOf(PreconditionFailed);
    expect((await bucket.getBytes('probe'))?.body.toString()).toBe('three');
  });

  // A bucket's entries change by conditional writes (If-Match), retried on a lost race; a directory's by rename, where
  // the last of two simultaneous merges wins (docs/store.md).
  if (backend.name === 's3') it('concurrent puts of the same artifact with different parents merge every parent', async () => {
    const a = await backend.open();
    const b = await backend.reopen(a);
    const parents = await Promise.all(Array.from({ length: 6 }, (_, i) => a.putJson({ p: i }, { kind: 'task-set' })));
    await Promise.all(parents.map((p, i) => (i % 2 === 0 ? a : b).putBytes('shared', { kind: 'dataset', parents: [p.ref] })));
    const entry = await b.stat((await a.list({ kind: 'dataset' }))[0]?.ref as string);
    expect([...entry.parents].sort()).toEqual(parents.map((p) => p.ref).sort());
  });
});
