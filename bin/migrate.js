#!/usr/bin/env node
// The `migrate` command: runs the compiled CLI, bundled into one file (npm run build: tsc, then esbuild; npm ci builds
// it through the prepare script): one file loads in about half the time of the ~200 modules it is made of.
// Without dist/ (a fresh clone, or `npm ci --ignore-scripts`) it says how to build instead of
// printing node's module-not-found stack trace.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/bundle/main.js', import.meta.url);
if (!existsSync(entry)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // A path as one shell word, whatever it holds (a space, a quote).
  const word = /^[\w@%+=:,./-]+$/.test(root) ? root : `'${root.replaceAll("'", "'\\''")}'`;
  process.stderr.write(
    `migrate: not built yet (${fileURLToPath(entry)} is missing).\n` +
      `Build it once: cd ${word} && npm ci   (it installs what the build needs, then builds), then run the command ` +
      'again. An installed copy (docs/install.md) comes built.\n',
  );
  process.exitCode = 2;
} else {
  // Every file and directory the tool or its engines (DuckDB, SQLite) create is its user's alone, whatever the umask
  // it was started with (docs/data-protection.md); a file meant for others (the metrics file) is given its mode.
  process.umask(0o077);
  const { keepHeapNearLiveData } = await import('../dist/cli/heap.js');
  const { main } = await import('../dist/bundle/main.js');
  keepHeapNearLiveData();
  process.exitCode = await main(process.argv);
}
