import { createRequire, syncBuiltinESMExports } from 'node:module';

// The fast tier's promise (vitest.config.ts): its tests run in the test's own process, so that the edit loop stays
// short. A test file of that tier that starts a child process (the binary, a shell, PostgreSQL, a browser) fails at
// that call, naming the file's way out: the list of files that start processes in vitest.config.ts. Worker threads
// are in-process and stay allowed.

const require = createRequire(import.meta.url);
const childProcess = require('node:child_process') as Record<string, unknown>;

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  childProcess[name] = (command: unknown) => {
    throw new Error(
      `the fast tier runs in-process, and this test starts a child process (${name} ${String(command)}): ` +
        "list its file in vitest.config.ts's STARTS_PROCESSES, the costly tier",
    );
  };
}
// `import { spawn } from 'node:child_process'` reads the replaced functions too.
syncBuiltinESMExports();
