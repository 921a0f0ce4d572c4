import { expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import { dockerClient } from './docker.js';
import { removeOwnedSandboxes } from './lifetime.js';
import { Sandbox } from './sandbox.js';

const docker = requires.docker();

// A file of its own (vitest forks one process per file): `removeOwnedSandboxes` stops this process from
// creating sandboxes, so lifetime.test.ts could not create more after its own call.
docker.describe('removeOwnedSandboxes with a removal already under way', () => {
  it('returns only once the container is gone, not while the engine is still removing it', async () => {
    const d = dockerClient();
    const sandbox = await Sandbox.create({ skipGc: true });
    // As a `replace` or `destroy` in flight when the signal comes. The engine refuses a second removal while the
    // first runs ("removal … already in progress") and still lists the container, as `removing`, for a moment:
    // before this was handled, the container was reported removed while `inspect` still found it.
    const underway = d.getContainer(sandbox.id).remove({ force: true });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const report = await removeOwnedSandboxes(20_000);
    expect(report).toEqual({ removed: [sandbox.id], left: [] });
    await expect(d.getContainer(sandbox.id).inspect()).rejects.toThrow(/no such container/i);
    // Whichever of the two removals the engine ran, the other was refused.
    await underway.catch(() => undefined);
  }, 60_000);
});
