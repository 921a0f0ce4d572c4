import path from 'node:path';
import { expect, it } from 'vitest';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';
import { objectPath } from './layout.js';

/** `objects/ab/cdef…`, an object's store-relative key. */
function objectKey(ref: string): string {
  return path.relative('/', objectPath('/', ref));
}
import { eachBackend } from './__fixtures__/backends.js';
import { loadTrajectories, putTrajectories } from './trajectory-set.js';

eachBackend('gc and verify', (backend) => {
  it('gc keeps what named roots reach through parents and members, and deletes the rest', async () => {
    const store = await backend.open();
    const tasks = await store.putJson({ tasks: ['t1'] }, { kind: 'task-set' });
    const kept = await putTrajectories(store, [fakeTrajectory({ task: 'a' }), fakeTrajectory({ task: 'b' })], { parents: [tasks.ref], name: 'keep' });
    const dropped = await putTrajectories(store, [fakeTrajectory({ task: 'c' })]);
    const orphan = await store.putBytes('orphan', { kind: 'blob' });

    // Within the grace period nothing is collected.
    const young = await store.gc();
    expect(young.deletedArtifacts).toEqual([]);
    expect(young.deletedObjects).toBe(0);

    const dry = await store.gc({ graceMs: 0, dryRun: true });
    expect(dry.deletedArtifacts.sort()).toEqual([dropped.ref, orphan.ref].sort());
    expect(await store.has(orphan.ref)).toBe(true);

    const report = await store.gc({ graceMs: 0 });
    expect(report.deletedArtifacts.sort()).toEqual([dropped.ref, orphan.ref].sort());
    expect(report.deletedObjects).toBe(3); // the two artifacts and the dropped set's one member
    expect(report.roots).toBe(1);
    expect(await store.has(tasks.ref)).toBe(true);
    expect((await loadTrajectories(store, kept.ref)).map((t) => t.task.id)).toEqual(['a', 'b']);
    expect(await store.has(dropped.ref)).toBe(false);
    expect((await store.verify()).ok).toBe(true);
  });
  it('verify re-hashes every object and reports corruption, missing objects and dangling refs', async () => {
    const store = await backend.open();
    const e = await store.putBytes('precious', { kind: 'blob', name: 'p' });
    const set = await putTrajectories(store, [fakeTrajectory()], { name: 's' });
    expect(await store.verify()).toMatchObject({ ok: true, artifacts: 2, refs: 2, objects: 3 });

    await backend.rawWrite(store, objectKey(e.ref), 'tamper');
    const member = (await store.getText(set.ref)).split('\n')[1] as string;
    const memberRef = (JSON.parse(member) as { object: string }).object;
    await backend.rawDelete(store, objectKey(memberRef));
    await backend.rawWrite(store, 'refs/ghost', `sha256:${'a'.repeat(64)}\n`);

    const report = await store.verify();
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.code).sort()).toEqual(['corrupt-object', 'dangling-ref', 'missing-member', 'size-mismatch']);
    expect(report.problems.find((p) => p.code === 'corrupt-object')?.ref).toBe(e.ref);
  });
});
