import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import SlowFirstSequencer from './tests/support/sequencer.js';

export default defineConfig({
  test: {
    // The Temporal native bridge crashes under worker threads.
    pool: 'forks',
    // At least two files at a time, even on 2 cores (vitest's default there is one): the slow files spend much
    // of their time waiting on dev servers, timers and subprocesses, so two side by side keep both cores busy.
    // On the 2-core CI machine that cut vitest from 24.3 to 19.3 minutes (scripts/test-suites.sh has the numbers).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The files that take minutes start first, the learning test last (tests/support/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    include: ['src/**/*.test.ts', 'workflows/**/*.test.ts', 'activities/**/*.test.ts', 'tests/**/*.test.ts', 'bench/**/*.test.ts'],
    // The soak's CI version runs after the other suites, alone (scripts/test-suites.sh; `npm run test:soak`): its
    // `pipeline_status` latency SLO measures the machine too when other files share its two cores.
    exclude: [...configDefaults.exclude, ...(process.env['GYMFLOW_SOAK_TEST'] === '1' ? [] : ['tests/soak.test.ts'])],
    // Limits for a test that hangs, not estimates of how long one takes: many tests start real processes (the
    // CLI through tsx, Python importing torch, dev servers), which on a CI machine whose cores are shared take
    // several times as long as on an idle one (the trainer-process file: 50 s on an idle 2-core machine, 150 s
    // on a busy one). A test that passes returns when it is done, so a generous limit costs it nothing.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    reporters: ['default', './tests/support/skip-reporter.ts'],
  },
});
