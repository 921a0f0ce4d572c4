import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';
import { objectPath } from './layout.js';
import { ArtifactStore } from './store.js';
import { loadTrajectories, putTrajectories } from './trajectory-set.js';

async function freshStore(): Promise<ArtifactStore> {
  return ArtifactStore.open({ root: await mkdtemp(path.join(tmpdir(), 'gymflow-store-')) });
}

describe('gc and verify', () => {
  it('gc keeps what named roots reach through parents and members, and deletes the rest', async () => {
    const store = await freshStore();
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
    const store = await freshStore();
    const e = await store.putBytes('precious', { kind: 'blob', name: 'p' });
    const set = await putTrajectories(store, [fakeTrajectory()], { name: 's' });
    expect(await store.verify()).toMatchObject({ ok: true, artifacts: 2, refs: 2, objects: 3 });

    const file = objectPath(store.root, e.ref);
    await chmod(file, 0o644);
    await writeFile(file, 'tamper');
    const member = (await store.getText(set.ref)).split('\n')[1] as string;
    const memberRef = (JSON.parse(member) as { object: string }).object;
    const { unlink } = await import('node:fs/promises');
    await unlink(objectPath(store.root, memberRef));
    await mkdir(path.join(store.root, 'refs'), { recursive: true });
    await writeFile(path.join(store.root, 'refs', 'ghost'), `sha256:${'a'.repeat(64)}\n`);

    const report = await store.verify();
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.code).sort()).toEqual(['corrupt-object', 'dangling-ref', 'missing-member', 'size-mismatch']);
    expect(report.problems.find((p) => p.code === 'corrupt-object')?.ref).toBe(e.ref);
  });
});
