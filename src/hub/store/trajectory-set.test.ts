import { expect, it } from 'vitest';
import { canonicalJson, sha256Ref } from '../../core/canonical.js';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';
import { eachBackend } from './__fixtures__/backends.js';
import { readFile } from 'node:fs/promises';
import { joinTrajectory, loadTrajectories, putTrajectories, splitTrajectory, storedTrajectory } from './trajectory-set.js';

eachBackend('trajectory sets', (backend) => {
  it('split and join are exact inverses', () => {
    const t = fakeTrajectory({ reward: 0.7, tokens: true, metadata: { seed: 3 } });
    const { behaviour, extra } = splitTrajectory(t);
    expect(sha256Ref(canonicalJson(behaviour))).toBe(t.id);
    expect(canonicalJson(joinTrajectory(t.id, behaviour, extra))).toBe(canonicalJson(t));
  });

  it('stores an identical behaviour once, keeps repeats and order, and round-trips rewards and timing', async () => {
    const store = await backend.open();
    const a1 = fakeTrajectory({ task: 'a', startedAt: '2026-01-01T00:00:00.000Z', metadata: { seed: 1 } });
    const a2 = fakeTrajectory({ task: 'a', startedAt: '2026-02-01T00:00:00.000Z', metadata: { seed: 2 } });
    const b = fakeTrajectory({ task: 'b' });
    expect(a1.id).toBe(a2.id);
    const set = await putTrajectories(store, [a1, b, a2, a1]);
    expect(set.meta).toEqual({ count: 4, unique: 2 });
    expect(set.format).toBe('trajectory-set');
    const back = await loadTrajectories(store, set.ref);
    expect(back.map((t) => canonicalJson(t))).toEqual([a1, b, a2, a1].map((t) => canonicalJson(t)));

    // A scored copy is a different set that shares the behaviour objects.
    const before = (await store.verify()).objects;
    const scored = await putTrajectories(store, [{ ...a1, reward: { total: 0.5, outcome: 1, process: 0.2, efficiency: 1, layers: {} } }], {
      kind: 'scored-trajectories',
      parents: [set.ref],
    });
    expect((await store.verify()).objects).toBe(before + 1);
    const [s] = await loadTrajectories(store, scored.ref);
    expect(s?.reward?.total).toBe(0.5);
    expect(s?.id).toBe(a1.id);
    expect((await store.stat(scored.ref)).kind).toBe('scored-trajectories');
  });

  it('writes each line as the canonical JSON of { id, extra, object }, the same set whether the stored forms are given or made', async () => {
    const store = await backend.open();
    const ts = [fakeTrajectory({ task: 'a', reward: 0.25, metadata: { z: 1, a: { y: [2, { d: 1, c: 0 }], b: 'é"\n' } } }), fakeTrajectory({ task: 'b', tokens: true })];
    const made = await putTrajectories(store, ts);
    const forms = new Map(ts.map((t) => [t, storedTrajectory(t)]));
    const given = await putTrajectories(store, ts, { stored: (t) => forms.get(t) });
    expect(given.ref).toBe(made.ref);
    const lines = (await readFile(await store.localObjectFile(made.ref), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toBe(canonicalJson(JSON.parse(line)));
    expect((await loadTrajectories(store, given.ref)).map((t) => canonicalJson(t))).toEqual(ts.map((t) => canonicalJson(t)));
  });

  it('reads a plain JSONL bytes artifact too, with ref:line in errors', async () => {
    const store = await backend.open();
    const t = fakeTrajectory();
    const good = await store.putBytes(`${JSON.stringify(t)}\n`, { kind: 'trajectories' });
    expect((await loadTrajectories(store, good.ref))[0]?.id).toBe(t.id);
    const bad = await store.putBytes(`${JSON.stringify(t)}\n${JSON.stringify({ ...t, envId: 7 })}\n`, { kind: 'trajectories' });
    await expect(loadTrajectories(store, bad.ref)).rejects.toThrow(new RegExp(`${bad.ref}:2 \\$\\.envId`));
  });
});
