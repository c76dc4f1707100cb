import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Tests that run the real binary (bin/migrate.js -> dist/bundle/) need a build of the current src/. It is made once,
// here, before any test file runs: one build per test run, and no suite rewriting dist/ while another suite's child
// process is loading it. A type error fails the run. When dist/ is newer than every file it is built from (src/, the
// build's configuration, the bundler script), it is current and the build is skipped: one test file runs in seconds
// (`npm run test:one -- test/path.test.ts`).

const root = fileURLToPath(new URL('..', import.meta.url));
const BUILT = join(root, 'dist', 'bundle', 'main.js');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.mjs', 'package-lock.json'];

function newestChange(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestChange(join(path, name))), stat.mtimeMs);
}

/** dist/ was built after the last change to anything it is built from. */
function distIsCurrent(): boolean {
  if (!existsSync(BUILT)) return false;
  const built = statSync(BUILT).mtimeMs;
  return INPUTS.every((input) => newestChange(join(root, input)) < built);
}

export default function buildDist(): void {
  if (distIsCurrent()) return;
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
