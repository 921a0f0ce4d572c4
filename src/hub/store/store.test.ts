import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Ref } from '../../core/canonical.js';
import { cleanTempFiles, tempPath } from './atomic.js';
import { indexPath, objectPath, resolveStoreRoot } from './layout.js';
import { eachBackend } from './__fixtures__/backends.js';

eachBackend('ArtifactStore', (backend) => {
  it('addresses raw bytes by their sha256 and JSON by its canonical form', async () => {
    const store = await backend.open();
    const raw = await store.putBytes('hello\n', { kind: 'blob' });
    expect(raw.ref).toBe(sha256Ref('hello\n'));
    expect(raw.size).toBe(6);
    expect((await store.get(raw.ref)).toString()).toBe('hello\n');

    const a = await store.putJson({ b: 1, a: [1, { y: 2, x: 1 }] }, { kind: 'task-set' });
    const b = await store.putJson({ a: [1, { x: 1, y: 2 }], b: 1 }, { kind: 'task-set' });
    expect(a.ref).toBe(b.ref);
    expect(a.ref).toBe(sha256Ref(canonicalJson({ a: [1, { x: 1, y: 2 }], b: 1 })));
    expect(await store.getJson(a.ref)).toEqual({ a: [1, { x: 1, y: 2 }], b: 1 });
    expect(a.format).toBe('json');
    // Sharded layout (in an s3:// store, objects/ is the cache).
    const hex = a.ref.slice(7);
    expect(objectPath(store.root, a.ref)).toBe(path.join(store.root, 'objects', hex.slice(0, 2), hex.slice(2)));
    if (backend.name === 'directory') expect(JSON.parse(await readFile(indexPath(store.root, a.ref), 'utf8'))).toMatchObject({ ref: a.ref, kind: 'task-set' });
    else expect(await readFile(objectPath(store.root, a.ref), 'utf8')).toBe(canonicalJson({ a: [1, { x: 1, y: 2 }], b: 1 }));
  });

  it('records kind, size, time, parents and name; a second put of the same bytes merges parents', async () => {
    const store = await backend.open();
    const p1 = await store.putJson({ p: 1 }, { kind: 'task-set' });
    const p2 = await store.putJson({ p: 2 }, { kind: 'checkpoint' });
    const first = await store.putBytes('data', { kind: 'trajectories', parents: [p1.ref], name: 'runs/a', meta: { count: 1 } });
    expect(first).toMatchObject({ kind: 'trajectories', size: 4, parents: [p1.ref], name: 'runs/a', meta: { count: 1 } });
    expect(Date.parse(first.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    const again = await store.putBytes('data', { kind: 'trajectories', parents: [p2.ref, p1.ref] });
    expect(again.parents).toEqual([p1.ref, p2.ref]);
    expect(again.createdAt).toBe(first.createdAt);
    expect((await store.stat(first.ref)).parents).toEqual([p1.ref, p2.ref]);
    expect(await store.getRef('runs/a')).toBe(first.ref);
    expect((await store.list()).map((e) => e.kind).sort()).toEqual(['checkpoint', 'task-set', 'trajectories']);
    expect((await store.list({ kind: 'checkpoint' })).map((e) => e.ref)).toEqual([p2.ref]);
  });





  it('streams big artifacts through a writer and publishes nothing until commit', async () => {
    const store = await backend.open();
    const w = await store.createWriter();
    await w.write('a'.repeat(1000));
    await w.write(Buffer.from('b'.repeat(1000)));
    expect(await store.list()).toEqual([]);
    expect((await readdir(path.join(store.root, 'tmp'))).length).toBe(1);
    const entry = await w.commit({ kind: 'checkpoint', name: 'ckpt' });
    expect(entry.ref).toBe(sha256Ref('a'.repeat(1000) + 'b'.repeat(1000)));
    expect(entry.size).toBe(2000);
    expect(await readdir(path.join(store.root, 'tmp'))).toEqual([]);
    const aborted = await store.createWriter();
    await aborted.write('zzz');
    await aborted.abort();
    expect(await readdir(path.join(store.root, 'tmp'))).toEqual([]);
  });

  it('removes temp files of dead local writers and stale foreign ones, and keeps live ones', async () => {
    const store = await backend.open();
    const tmp = path.join(store.root, 'tmp');
    const mine = tempPath(store.root);
    const host = path.basename(mine).split('.')[0] as string;
    const dead = path.join(tmp, `${host}.999999999.abcd.tmp`);
    const foreignYoung = path.join(tmp, 'other-host.1.abcd.tmp');
    const foreignOld = path.join(tmp, 'other-host.2.abcd.tmp');
    for (const f of [mine, dead, foreignYoung, foreignOld]) await writeFile(f, 'x');
    const { utimes } = await import('node:fs/promises');
    const old = new Date(Date.now() - 2 * 3_600_000);
    await utimes(foreignOld, old, old);
    const r = await cleanTempFiles(store.root);
    expect(r.removed.sort()).toEqual([dead, foreignOld].sort());
    expect((await readdir(tmp)).sort()).toEqual([path.basename(foreignYoung), path.basename(mine)].sort());
    expect(r.kept).toBe(2);
  });

});

describe('store roots', () => {
  it('takes its root from the option, then $GYMFLOW_STORE, then .gymflow/store; an s3:// URL stays as it is', () => {
    expect(resolveStoreRoot('/x/y', { GYMFLOW_STORE: '/env' })).toBe('/x/y');
    expect(resolveStoreRoot(undefined, { GYMFLOW_STORE: '/env' })).toBe('/env');
    expect(resolveStoreRoot(undefined, {})).toBe(path.resolve('.gymflow/store'));
    expect(resolveStoreRoot(undefined, { GYMFLOW_STORE: 's3://bucket/runs' })).toBe('s3://bucket/runs');
  });
});
