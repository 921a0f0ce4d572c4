/**
 * A writer that gets killed: run as `node --import tsx crash-writer.ts <root> <mode>`.
 * It prints `ready` on stdout once it is in the middle of a write, then keeps writing until killed.
 *
 * - `stream`: a big streaming artifact written in 256 KiB chunks, never committed.
 * - `set`: first stores a complete trajectory set named `rollouts`, then starts storing a second,
 *   endless set under the same name (its first member batch is durable when `ready` is printed).
 */
import { fakeTrajectory } from '../../__fixtures__/trajectories.js';
import type { Trajectory } from '../../../core/trajectory.js';
import { ArtifactStore } from '../store.js';
import { putTrajectories } from '../trajectory-set.js';

async function main(): Promise<void> {
  const [root, mode] = process.argv.slice(2);
  if (!root || !mode) throw new Error('usage: crash-writer.ts <root> stream|set');
  const store = await ArtifactStore.open({ root });
  if (mode === 'stream') {
    const writer = await store.createWriter();
    const chunk = Buffer.alloc(256 * 1024, 0x61);
    await writer.write(chunk);
    process.stdout.write('ready\n');
    for (;;) {
      await writer.write(chunk);
      await new Promise((r) => setImmediate(r));
    }
  }
  if (mode === 'set') {
    const first = Array.from({ length: 5 }, (_, i) => fakeTrajectory({ task: `task-${i}` }));
    await putTrajectories(store, first, { name: 'rollouts' });
    async function* endless(): AsyncGenerator<Trajectory> {
      for (let i = 0; ; i++) {
        yield fakeTrajectory({ task: `endless-${i}` });
        if (i === 300) process.stdout.write('ready\n');
        if (i > 300) await new Promise((r) => setImmediate(r));
      }
    }
    await putTrajectories(store, endless(), { name: 'rollouts' });
  }
  throw new Error(`unknown mode ${mode}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
