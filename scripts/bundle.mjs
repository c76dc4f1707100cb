import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Bundles the compiled CLI (dist/, from tsc) into one file, dist/bundle/main.js, which bin/migrate.js loads: node
// reads, resolves and links one module instead of about 200 (the project's and its dependencies'), which halves the
// start-up of every command (`migrate --version`: 0.36 s instead of 0.56 s on the 2-core machine). The CSV parsing
// and key-scan threads' entries go beside it (src/sources/csv-thread.ts and key-scan-thread.ts start their workers
// next to themselves), and so does the thread that counts the ledger for --metrics-file (commands/push/ledger-counts-thread.ts).
// better-sqlite3 and DuckDB stay outside (native addons, loaded from node_modules; DuckDB only when a shape runs).

const root = fileURLToPath(new URL('..', import.meta.url));

await build({
  absWorkingDir: root,
  entryPoints: [
    'dist/cli/main.js',
    'dist/sources/csv-thread-worker.js',
    'dist/sources/key-scan-worker.js',
    'dist/commands/push/ledger-counts-worker.js',
  ],
  entryNames: '[name]',
  outdir: 'dist/bundle',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', '@duckdb/node-api'],
  // Bundled CommonJS dependencies call require(): give the ES module one.
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  logLevel: 'warning',
});

// What `migrate --version` prints beside the version: the commit the build was made from and when (an image or a
// tarball built without the repository's history says so, or takes MIGRATE_BUILD_COMMIT from its build).
await writeFile(join(root, 'dist', 'build-info.json'), `${JSON.stringify(buildInfo(), null, 2)}\n`);

function buildInfo() {
  const date = new Date().toISOString();
  const fromEnv = process.env['MIGRATE_BUILD_COMMIT'];
  if (fromEnv) return { commit: fromEnv, date };
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return { commit: `${commit.toString().trim()}${dirty.length > 0 ? '-modified' : ''}`, date };
  } catch {
    return { commit: 'unknown', date };
  }
}
