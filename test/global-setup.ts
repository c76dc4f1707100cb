import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// Tests that run the real binary (bin/migrate.js -> dist/bundle/) need a build of the current src/.
// It is made once, here, before any test file runs: one build per test run, and no suite
// rewriting dist/ while another suite's child process is loading it. A type error fails the run.
export default function buildDist(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  try {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
      cwd: root,
      stdio: 'pipe',
    });
    // bin/migrate.js runs the bundle (scripts/bundle.mjs), made from what tsc just wrote.
    execFileSync(process.execPath, ['scripts/bundle.mjs'], { cwd: root, stdio: 'pipe' });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
    throw new Error(`The build of dist/ failed; tests that run bin/migrate.js need it:\n${output}`, { cause: error });
  }
}
