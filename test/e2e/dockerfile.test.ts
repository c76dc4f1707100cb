import { spawnSync } from 'node:child_process';
import { cpSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { inStage, instructions, listing, runDockerfile, type Stage } from './dockerfile-steps.js';

// The container image of docs/install.md, where no container engine is at hand (the development machine and CI have
// none): the Dockerfile's stages run as a script on this machine (test/e2e/dockerfile-steps.ts): a clean build and
// pack of the build context, the tarball installed by scripts/install-tarball.sh, and the image's command run as the
// image runs it (its PATH, its working directory, its volumes), with the commit given as a build argument. What needs
// root (apt-get, the user) is checked from the Dockerfile's text. npm's dependencies come from its cache (filled by
// the checkout's own `npm ci`), as Docker's layer cache would hold them.
const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'dockerfile-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const MINUTES = 60_000;
const COMMIT = 'dockerfile0test';
const DOCKERFILE = join(root, 'Dockerfile');

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

  it(
    'builds, packs and installs the tool; the image prints the version with the commit and runs the demo',
    { timeout: 25 * MINUTES },
    () => {
      const stages = runDockerfile({
        dockerfile: DOCKERFILE,
        context: root,
        scratch,
        buildArgs: { MIGRATE_BUILD_COMMIT: COMMIT },
        env: { npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
      });
      const image = stages.at(-1)!;
      // What was not run needs root; apt-get's packages are this machine's.
      for (const skipped of stages.flatMap((stage) => stage.skipped))
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
        '--state',
        inStage(image, '/state'),
      ]);
      expect(demo.status, String(demo.stdout) + String(demo.stderr)).toBe(0);
      expect(String(demo.stdout)).toContain('push finished: everything done');
    },
  );
});
