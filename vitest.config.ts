import { defineConfig } from 'vitest/config';

// Two tiers by cost, run one after the other by `npm test` (as CI runs it):
// - fast (`npm run test:fast`, the edit loop): every test that runs in its own process: the engine, the client and
//   the sandbox over real HTTP, real SQLite and DuckDB, worker threads. test/in-process.ts fails a test of this tier
//   that starts a child process, so the tier cannot grow costly unseen.
// - processes: every file that starts one: the real binary (test/e2e/, test/cli/ and the files below), PostgreSQL
//   (test/pg/cluster.ts), Chromium, a shell; and the install of the packed tarball and the Dockerfile's stages
//   (test/e2e/install.test.ts). dist/ is built once for this tier, before its first file, and not at all when it is
//   newer than src/ (test/global-setup.ts).
// No test waits on the wall clock, so several files may run at once on two cores.
const STARTS_PROCESSES = [
  'test/e2e/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/intake/export.test.ts',
  'test/intake/issue-spool.test.ts',
  'test/ledger/disk-trouble.test.ts',
  'test/ledger/ledger.test.ts',
  'test/ledger/postgres-ledger.test.ts',
  'test/commands/push/metrics.test.ts',
  'test/commands/report/html-report.browser.test.ts',
  'test/docs/tour.test.ts',
  'test/output/spreadsheet-safe.test.ts',
  'test/sandbox/cli.test.ts',
  'test/sources/csv-thread.test.ts',
  'test/sources/export-entries.test.ts',
  'test/sources/hostile-input.test.ts',
];

export default defineConfig({
  test: {
    // A guard against a hang, not a measure: on a busy two-core machine (load 20 and more) a CPU-heavy property test
    // or a cleanup of an install's node_modules takes minutes, and must still pass.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // push stamps every line of non-terminal output with the time and its run id (cron mail); the tests read the
    // lines as a terminal shows them, but for the tests of the stamps themselves, which unset this.
    env: { MIGRATE_TIMESTAMPS: '0' },
    // Tests start real servers and child processes.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: STARTS_PROCESSES,
          setupFiles: ['test/in-process.ts'],
          // Files share their worker's loaded modules (half the tier's CPU); each file still starts its own servers.
          isolate: false,
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          globalSetup: ['test/global-setup.ts'],
          include: STARTS_PROCESSES,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
