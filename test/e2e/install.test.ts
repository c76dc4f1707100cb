import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convergesWithinFiveRuns, nightsUntilProcessed } from './cron-recipe.js';
import { inStage, instructions, listing, runDockerfile, type Stage } from './dockerfile-steps.js';
import { SAMPLE_PERIOD_FLAGS } from './helpers.js';

// The installs of docs/install.md, from one build: the repository's Dockerfile run stage by stage on this machine
// (test/e2e/dockerfile-steps.ts; the development machine and CI have no container engine to build with): a clean
// `npm ci` and `npm pack` of the build context (the tarball a server installs), that tarball installed into an empty
// prefix by scripts/install-tarball.sh (the install stage, as on a server), and the image's command run as the image
// runs it (its PATH, its working directory, its volumes), with the commit given as a build argument. What needs root
// (apt-get, the user) is checked from the Dockerfile's text. The server's tests run the install stage's prefix: the
// README's demo from a directory outside the checkout and the operators' guide's cron recipe (docs/operators-guide.md
// section 3), which calls the installed command by its path. npm's dependencies come from its cache (filled by the
// checkout's own `npm ci`), as Docker's layer cache would hold them; better-sqlite3 compiles itself where no prebuilt
// binary can be fetched.
const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'install-'));
const MINUTES = 60_000;
// Three stages' node_modules: minutes to remove on a loaded machine.
afterAll(() => rmSync(scratch, { recursive: true, force: true }), 10 * MINUTES);

const COMMIT = 'dockerfile0test';
const DOCKERFILE = join(root, 'Dockerfile');

/** The Dockerfile's stages once run, or why they could not be (each test that needs them fails with the reason). */
let built: Stage[] | Error;
beforeAll(() => {
  try {
    built = runDockerfile({
      dockerfile: DOCKERFILE,
      context: root,
      scratch,
      buildArgs: { MIGRATE_BUILD_COMMIT: COMMIT },
      env: { npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
    });
  } catch (error) {
    built = error instanceof Error ? error : new Error(String(error));
  }
}, 25 * MINUTES);

function stages(): Stage[] {
  if (built instanceof Error) throw built;
  return built;
}

function stage(name: string): Stage {
  const found = stages().find((one) => one.name === name);
  if (found === undefined) throw new Error(`the Dockerfile has no stage named ${name}`);
  return found;
}

/** The tarball the build stage packed (what a server installs). */
function tarball(): string {
  const pkg = inStage(stage('build'), '/pkg');
  const names = readdirSync(pkg).filter((name) => name.endsWith('.tgz'));
  expect(names).toEqual([`energy-migration-migrate-${version()}.tgz`]);
  return join(pkg, names[0]!);
}

/** The installed command, as the crontab calls it: by its path in the prefix the install stage installed into. */
function installed(): string {
  return inStage(stage('install'), '/opt/migrate/bin/migrate');
}

function installedPackage(): string {
  return inStage(stage('install'), '/opt/migrate/lib/node_modules/@energy-migration/migrate');
}

function version(): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The image's command with `args`, as `docker run IMAGE args` runs it (a uid of its own aside). */
function runImage(image: Stage, args: string[]): ReturnType<typeof spawnSync> {
  const [program = '', ...fixed] = image.entrypoint;
  return spawnSync(program, [...fixed, ...args], {
    cwd: inStage(image, image.workdir),
    env: { ...image.env, NO_COLOR: '1' },
    encoding: 'utf8',
  });
}

/** Files and directories under `dir` that a user who does not own them could not read (or enter). */
function unreadableByOthers(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map((name) => join(dir, String(name)))
    .filter((path) => {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return false;
      return (stat.mode & 0o004) === 0 || (stat.isDirectory() && (stat.mode & 0o001) === 0);
    });
}

/** Every package directory under `dir`'s node_modules as the lock names it (`node_modules/a/node_modules/@s/b`). */
function packagesUnder(dir: string, under = 'node_modules'): string[] {
  if (!existsSync(join(dir, under))) return [];
  return readdirSync(join(dir, under))
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@')
        ? readdirSync(join(dir, under, name)).map((scoped) => `${under}/${name}/${scoped}`)
        : [`${under}/${name}`],
    )
    .flatMap((path) => [path, ...packagesUnder(dir, `${path}/node_modules`)]);
}

function packageVersion(dir: string): string | undefined {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version;
}

interface Lock {
  packages: Record<string, { version?: string; dev?: boolean; optional?: boolean }>;
}

describe('the Dockerfile, stage by stage without a container engine', () => {
  it('the final stage runs as a non-root user with the export and the state as volumes', () => {
    const steps = instructions(readFileSync(DOCKERFILE, 'utf8'));
    const stages = steps.filter((step) => step.keyword === 'FROM');
    expect(stages.length).toBeGreaterThanOrEqual(3);
    const final = steps.slice(steps.lastIndexOf(stages.at(-1)!));
    const user = final.find((step) => step.keyword === 'USER')?.args ?? '';
    expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/);
    const uid = user.split(':')[0]!;
    expect(final.some((step) => step.keyword === 'RUN' && step.args.includes(`useradd --system --uid ${uid}`))).toBe(
      true,
    );
    expect(final.find((step) => step.keyword === 'VOLUME')?.args).toBe('["/export", "/state"]');
    expect(final.find((step) => step.keyword === 'ENTRYPOINT')?.args).toBe('["migrate"]');
    // Nothing to build with in the image: the compilers are the install stage's.
    expect(final.filter((step) => step.keyword === 'RUN').map((step) => step.args)).not.toContainEqual(
      expect.stringContaining('g++'),
    );
  });

  it('every stage starts from one Node.js LTS image (22 or 24), its version named and pinned by digest', () => {
    const bases = instructions(readFileSync(DOCKERFILE, 'utf8'))
      .filter((step) => step.keyword === 'FROM')
      .map((step) => step.args.replace(/\s+AS\s+\S+$/i, ''));
    expect(new Set(bases).size).toBe(1);
    expect(bases[0]).toMatch(/^node:(22|24)\.\d+\.\d+-bookworm-slim@sha256:[0-9a-f]{64}$/);
  });

  it(
    'builds, packs and installs the tool; the image prints the version with the commit and runs the demo',
    { timeout: 10 * MINUTES },
    () => {
      const image = stages().at(-1)!;
      // What was not run needs root; apt-get's packages are this machine's.
      for (const skipped of stages().flatMap((one) => one.skipped))
        expect(skipped).toMatch(/^(apt-get (update|install)|groupadd|useradd|chown)\b/);
      expect(image.skipped.some((part) => part.startsWith('apt-get'))).toBe(false);

      const printed = runImage(image, ['--version']);
      expect(printed.status, String(printed.stderr)).toBe(0);
      expect(String(printed.stdout)).toMatch(
        new RegExp(`^${version().replaceAll('.', '\\.')} \\(commit ${COMMIT}, built `),
      );
      expect(runImage(image, image.cmd).status).toBe(0); // CMD: --help

      // uid 10001 owns none of the installed files: each must be readable (and each directory open) to others.
      expect(unreadableByOthers(inStage(image, '/opt/migrate'))).toEqual([]);
      expect(listing(inStage(image, '/opt/migrate/lib/node_modules/@energy-migration/migrate/src'))).toEqual([]);

      // docker run -v export:/export:ro -v state:/state IMAGE push /export --state /state, against the sandbox.
      cpSync(join(root, 'fixtures', 'sample'), inStage(image, '/export'), { recursive: true });
      const demo = runImage(image, [
        'push',
        inStage(image, '/export'),
        '--sandbox',
        ...SAMPLE_PERIOD_FLAGS,
        '--state',
        inStage(image, '/state'),
      ]);
      expect(demo.status, String(demo.stdout) + String(demo.stderr)).toBe(0);
      expect(String(demo.stdout)).toContain('push finished: everything done');
    },
  );
});

describe('the packed tarball', () => {
  it('ships the lock as npm-shrinkwrap.json, byte for byte, and the checkout keeps none', () => {
    const listed = spawnSync('tar', ['-tzf', tarball()], { encoding: 'utf8' });
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout.split('\n')).toContain('package/npm-shrinkwrap.json');
    const shipped = spawnSync('tar', ['-xzOf', tarball(), 'package/npm-shrinkwrap.json'], { encoding: 'utf8' });
    expect(shipped.stdout).toBe(readFileSync(join(root, 'package-lock.json'), 'utf8'));
    // npm pack made it for the tarball only (prepack, then postpack removed it).
    expect(existsSync(inStage(stage('build'), '/src/npm-shrinkwrap.json'))).toBe(false);
  });

  it('installs every runtime dependency at the version of the lock, and npm lists no install script unreviewed', () => {
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as Lock;
    const found = packagesUnder(installedPackage());
    const versions = found.map((path) => `${path}@${packageVersion(join(installedPackage(), path))}`);
    // Optional dependencies are there on the platforms they are for (DuckDB's native bindings).
    const expected = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.dev !== true && (entry.optional !== true || found.includes(path)))
      .map(([path, entry]) => `${path}@${entry.version}`);
    expect(versions.sort()).toEqual(expected.sort());
    // npm 11 lists, then npm 12 blocks, a dependency's install script no allowScripts policy covers: the install
    // script gives one for better-sqlite3, the only runtime dependency with an install script.
    expect(stage('install').printed).not.toContain('not yet covered by allowScripts');
  });
});

describe('the packed tarball, installed into an empty prefix', () => {
  it('installs the migrate command, which runs the demo from anywhere', () => {
    tarball(); // energy-migration-migrate-VERSION.tgz
    // scripts/install-tarball.sh ends with the installed command's --version.
    expect(stage('install').printed).toMatch(
      new RegExp(`^${version().replaceAll('.', '\\.')} \\(commit ${COMMIT}, built `, 'm'),
    );
    const sample = join(installedPackage(), 'fixtures', 'sample');
    const demo = spawnSync(
      installed(),
      ['push', sample, '--sandbox', ...SAMPLE_PERIOD_FLAGS, '--state', join(scratch, 'state')],
      {
        cwd: scratch,
        encoding: 'utf8',
      },
    );
    expect(demo.stderr).not.toContain('internal error');
    expect(demo.status, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toContain('push finished: everything done');
    expect(demo.stdout).toMatch(/^ {4}done +50$/m);
    // The installed package holds what the command needs and no test, source or development file.
    expect(readdirSync(installedPackage()).sort()).toEqual([
      'README.md',
      'bin',
      'dist',
      'docs',
      'fixtures',
      'node_modules',
      'npm-shrinkwrap.json',
      'package.json',
    ]);
  });
});

describe("the operators' guide's crontab, with the installed command and the cohort's run configuration", () => {
  it('is what cron would run: --no-wait pushes converge, the status job mails until the migration is done, and every line of the push output has the time and its run id', async () => {
    await nightsUntilProcessed(join(scratch, 'srv'), `"${installed()}"`);
  });

  it('converges against the sandbox in its own process (processing 0.3-0.9 s): 200 accounts with every record kind land within 5 runs, and status exits 0', async () => {
    await convergesWithinFiveRuns(join(scratch, 'srv-own-process'), `"${installed()}"`);
  });
});
