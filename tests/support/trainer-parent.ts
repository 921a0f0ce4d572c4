/**
 * A stand-in for a worker, for tests that `kill -9` it: runs every launch given as JSON in argv[2]
 * (`TrainerLaunch[]`) with `runTrainer`, as the train and serve activities do, prints `running` once all are
 * spawned and `event NAME` for every trainer event, and waits to be killed.
 *
 *   node --import tsx tests/support/trainer-parent.ts '[{"command":"python","args":["-c","…"]}]'
 */
import { runTrainer, type TrainerLaunch } from '../../src/runtime/trainer-process.js';

const launches = JSON.parse(process.argv[2] ?? '[]') as TrainerLaunch[];
for (const launch of launches) {
  void runTrainer({ launch, onEvent: (e) => console.log(`event ${e.event}`) }).then((r) => console.log(`exited ${launch.command}: ${r.exitCode ?? r.exitSignal}`));
}
console.log('running');
setInterval(() => undefined, 1 << 30);
