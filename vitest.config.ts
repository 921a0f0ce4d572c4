import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal native bridge crashes under worker threads.
    pool: 'forks',
    include: ['src/**/*.test.ts', 'workflows/**/*.test.ts', 'activities/**/*.test.ts', 'tests/**/*.test.ts', 'bench/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default', './tests/support/skip-reporter.ts'],
  },
});
