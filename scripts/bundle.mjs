import { build } from 'esbuild';

// Bundles the compiled CLI (dist/, from tsc) into one file, dist/bundle/main.js, which bin/migrate.js loads: node
// reads, resolves and links one module instead of about 200 (the project's and its dependencies'), which halves the
// start-up of every command (`migrate --version`: 0.36 s instead of 0.56 s on the 2-core machine). The CSV parsing
// and key-scan threads' entries go beside it (src/sources/csv-thread.ts and key-scan-thread.ts start their workers
// next to themselves), and so does the thread that counts the ledger for --metrics-file (report/ledger-counts-thread.ts).
// better-sqlite3 and DuckDB stay outside (native addons, loaded from node_modules; DuckDB only when a shape runs).

const root = new URL('..', import.meta.url).pathname;

await build({
  absWorkingDir: root,
  entryPoints: [
    'dist/cli/main.js',
    'dist/sources/csv-thread-worker.js',
    'dist/sources/key-scan-worker.js',
    'dist/report/ledger-counts-worker.js',
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
