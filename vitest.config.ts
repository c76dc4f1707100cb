import { defineConfig } from 'vitest/config';

// Two tiers, run one after the other: the in-process tests first (they fail fast and cheap), then the end-to-end
// files, which run the real binary as a child process against the sandbox (test/e2e/, test/cli/). dist/ is built once
// per run, and not at all when it is newer than src/ (test/global-setup.ts). No test waits on the wall clock, so
// several files may run at once on two cores: most of a file's time is spent waiting for a child process or a socket.
const END_TO_END = ['test/e2e/**/*.test.ts', 'test/cli/**/*.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    // push stamps every line of non-terminal output with the time and its run id (cron mail); the tests read the
    // lines as a terminal shows them, but for the tests of the stamps themselves, which unset this.
    env: { MIGRATE_TIMESTAMPS: '0' },
    hookTimeout: 60_000,
    // Tests start real servers and child processes.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // The root's build (below) serves both tiers.
          globalSetup: [],
          include: ['test/**/*.test.ts'],
          exclude: END_TO_END,
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          globalSetup: [],
          include: END_TO_END,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
