import { expect, it } from 'vitest';
import { eachBackend } from './__fixtures__/backends.js';

eachBackend('lineage', (backend) => {
  it('walks lineage: dataset ← scored ← trajectories ← task set + checkpoint', async () => {
    const store = await backend.open();
    const tasks = await store.putJson({ tasks: ['t1'] }, { kind: 'task-set' });
    const ckpt = await store.putBytes('weights', { kind: 'checkpoint' });
    const trajs = await store.putBytes('t', { kind: 'trajectories', parents: [tasks.ref, ckpt.ref] });
    const scored = await store.putBytes('s', { kind: 'scored-trajectories', parents: [trajs.ref, 'sha256:' + 'f'.repeat(64)] });
    const data = await store.putBytes('d', { kind: 'dataset', parents: [scored.ref, trajs.ref], name: 'sft' });
    const tree = await store.lineage(data.ref);
    expect(tree.names).toEqual(['sft']);
    expect(tree.parents.map((p) => p.entry?.kind)).toEqual(['scored-trajectories', 'trajectories']);
    const s = tree.parents[0];
    expect(s?.parents.map((p) => p.entry?.kind ?? 'missing')).toEqual(['trajectories', 'missing']);
    expect(s?.parents[0]?.parents.map((p) => p.entry?.kind)).toEqual(['task-set', 'checkpoint']);
    // The second path to `trajectories` is not expanded again.
    expect(tree.parents[1]?.repeated).toBe(true);
    expect(tree.parents[1]?.parents).toEqual([]);
  });
});
