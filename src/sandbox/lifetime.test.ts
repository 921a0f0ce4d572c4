import { expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import { dockerClient } from './docker.js';
import { ownedSandboxIds, removeOwnedSandboxes, sandboxesStopping } from './lifetime.js';
import { Sandbox } from './sandbox.js';

const docker = requires.docker();

// One process per test file (vitest forks): `removeOwnedSandboxes` stops this one from creating sandboxes.
docker.describe('removeOwnedSandboxes (what SIGINT / SIGTERM run)', () => {
  it('removes the containers this process created, also one being replaced, keeps handed-over detached ones, and refuses new ones', async () => {
    const d = dockerClient();
    const a = await Sandbox.create({ skipGc: true });
    const b = await Sandbox.create({ skipGc: true });
    const kept = await Sandbox.create({ detached: true, skipGc: true });
    const unsent = await Sandbox.create({ detached: true, skipGc: true });
    kept.handOver();
    try {
      expect(ownedSandboxIds().sort()).toEqual([a.id, b.id, unsent.id].sort());
      // A creation in flight when the signal comes: its container is removed too, and the replace fails.
      const replacing = b.replace().then(
        () => 'replaced',
        (err: unknown) => String(err),
      );
      const report = await removeOwnedSandboxes(20_000);
      expect(await replacing).toMatch(/shutting down/);
      expect(sandboxesStopping()).toBe(true);
      expect(report.left).toEqual([]);
      expect(report.removed).toEqual(expect.arrayContaining([a.id, unsent.id]));
      for (const id of [a.id, b.id, unsent.id]) await expect(d.getContainer(id).inspect(), id).rejects.toThrow(/no such container/i);
      expect((await d.getContainer(kept.id).inspect()).State.Running).toBe(true);
      await expect(Sandbox.create({ skipGc: true })).rejects.toThrow(/shutting down/);
      expect(ownedSandboxIds()).toEqual([]);
    } finally {
      await kept.destroy();
    }
  }, 60_000);
});
