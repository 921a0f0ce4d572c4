import { expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { eachBackend } from './__fixtures__/backends.js';

eachBackend('refs', (backend) => {
  it('resolves full refs, unique prefixes and names, and names the input when it cannot', async () => {
    const store = await backend.open();
    const e = await store.putBytes('x', { kind: 'blob', name: 'latest' });
    expect(await store.resolve(e.ref)).toBe(e.ref);
    expect(await store.resolve(e.ref.slice(0, 15))).toBe(e.ref);
    expect(await store.resolve('latest')).toBe(e.ref);
    await expect(store.resolve('nope')).rejects.toThrow(/no ref named 'nope' in store/);
    await expect(store.resolve(`sha256:${'0'.repeat(64)}`)).rejects.toThrow(StoreError);
    await expect(store.resolve('../etc/passwd')).rejects.toThrow(/neither a ref/);
    await expect(store.resolve('sha256:72')).rejects.toThrow("ref prefix 'sha256:72' is too short: give at least 6 hex digits after sha256:");
    await expect(store.setRef('bad name', e.ref)).rejects.toThrow(/invalid ref name 'bad name'/);
    await expect(store.setRef('x', `sha256:${'1'.repeat(64)}`)).rejects.toThrow(/is not in store/);
    await expect(store.putBytes('y', { kind: 'Bad Kind' })).rejects.toThrow(/invalid artifact kind 'Bad Kind'/);
  });
  it('lists, moves and deletes refs', async () => {
    const store = await backend.open();
    const a = await store.putBytes('a', { kind: 'blob', name: 'x/one' });
    const b = await store.putBytes('b', { kind: 'blob', name: 'two' });
    expect(await store.listRefs()).toEqual([
      { name: 'two', ref: b.ref },
      { name: 'x/one', ref: a.ref },
    ]);
    await store.setRef('two', a.ref);
    expect(await store.getRef('two')).toBe(a.ref);
    expect(await store.deleteRef('two')).toBe(true);
    expect(await store.deleteRef('two')).toBe(false);
    expect(await store.getRef('two')).toBeUndefined();
  });
  it('leaves out a ref file that holds no ref, lists it, and refuses gc while it is there', async () => {
    const store = await backend.open();
    const a = await store.putBytes('a', { kind: 'blob', name: 'runs/expert' });
    await backend.rawWrite(store, 'refs/mytag', 'not a ref\n');
    expect(await store.listRefs()).toEqual([{ name: 'runs/expert', ref: a.ref }]);
    expect((await store.scanRefs()).bad).toEqual([{ name: 'mytag', path: store.backend.refLocation('mytag'), message: expect.stringMatching(/refs\/mytag 'not a ref' is not a content ref/) }]);
    expect((await store.lineage(a.ref)).names).toEqual(['runs/expert']);
    await expect(store.gc()).rejects.toThrow(/gc: .*refs\/mytag holds no ref .*Fix it \(gymflow store tag\) or remove it first/);
    expect((await store.verify()).problems).toEqual([expect.objectContaining({ code: 'dangling-ref', message: expect.stringMatching(/^refs\/mytag holds no ref/) })]);
    await expect(store.checkName('runs')).rejects.toThrow(/it is a folder of names/);
    await expect(store.checkName('mytag/x')).rejects.toThrow(/'mytag' is already a name/);
    await expect(store.deleteRef('runs')).rejects.toThrow(/cannot remove 'runs': it is a folder of names/);
  });
});
