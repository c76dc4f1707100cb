import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

// The repository's Dockerfile, run without a container engine (docs/install.md "Container image"): its stages one
// after the other on this machine, each in a directory of its own standing for the stage's file system. Every absolute
// path the Dockerfile names (/src, /pkg, /opt/migrate, /state) is taken inside that directory; the base image's own
// programs (node, npm, sh, python3, make, g++) are this machine's. Commands that need root and change this machine
// (apt-get, groupadd, useradd, chown) are not run: their packages must be here already, and what they would set up is
// checked from the Dockerfile's text instead. An instruction this runner does not know fails it, so the Dockerfile
// cannot outgrow its test unseen.

export interface Stage {
  name: string;
  /** The stage's file system. */
  root: string;
  /** ENV and ARG values as the stage's commands see them. */
  env: Record<string, string>;
  workdir: string;
  user: string | undefined;
  volumes: string[];
  entrypoint: string[];
  cmd: string[];
  /** What was not run, and why: `apt-get install python3 make g++ (needs root: the programs are here)`. */
  skipped: string[];
  /** What the stage's commands printed (stdout and stderr), as a build log shows it. */
  printed: string;
}

export interface RunOptions {
  dockerfile: string;
  /** The build context (the checkout). */
  context: string;
  /** Where the stages' file systems go. */
  scratch: string;
  buildArgs: Record<string, string>;
  /** Environment of every command besides the Dockerfile's own (e.g. npm's offline cache). */
  env: Record<string, string>;
}

/** The Dockerfile's instructions: comments dropped, continued lines joined. */
export function instructions(text: string): Array<{ keyword: string; args: string }> {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

/** Runs every stage; the stages by name, the last one the image. */
export function runDockerfile(options: RunOptions): Stage[] {
  const stages: Stage[] = [];
  for (const { keyword, args } of instructions(readFileSync(options.dockerfile, 'utf8'))) {
    if (keyword === 'FROM') {
      stages.push(newStage(args, stages.length, options));
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) throw new Error(`${keyword} before FROM`);
    step(stage, keyword, args, stages, options);
  }
  return stages;
}

function newStage(args: string, index: number, options: RunOptions): Stage {
  const name = /\bAS\s+(\S+)$/i.exec(args)?.[1] ?? String(index);
  const root = join(options.scratch, `stage-${index}-${name}`);
  mkdirSync(root, { recursive: true });
  const env = { ...process.env, ...options.env } as Record<string, string>;
  return {
    name,
    root,
    env,
    workdir: '/',
    user: undefined,
    volumes: [],
    entrypoint: [],
    cmd: [],
    skipped: [],
    printed: '',
  };
}

function step(stage: Stage, keyword: string, args: string, stages: Stage[], options: RunOptions): void {
  switch (keyword) {
    case 'WORKDIR':
      stage.workdir = args;
      mkdirSync(inStage(stage, args), { recursive: true });
      return;
    case 'ARG': {
      const [name = '', fallback = ''] = args.split('=');
      stage.env[name] = options.buildArgs[name] ?? fallback;
      return;
    }
    case 'ENV': {
      const [name = '', ...value] = args.split('=');
      stage.env[name] = expand(mapPaths(stage, value.join('=')), stage.env);
      return;
    }
    case 'COPY':
      return copy(stage, args, stages, options.context);
    case 'RUN':
      return run(stage, args);
    case 'USER':
      stage.user = args;
      return;
    case 'VOLUME':
      stage.volumes = JSON.parse(args) as string[];
      return;
    case 'ENTRYPOINT':
      stage.entrypoint = JSON.parse(args) as string[];
      return;
    case 'CMD':
      stage.cmd = JSON.parse(args) as string[];
      return;
    default:
      throw new Error(`the Dockerfile's ${keyword} is not known to test/e2e/dockerfile-steps.ts: teach it`);
  }
}

/** `/opt/migrate` of the stage: a directory under its root. */
export function inStage(stage: Stage, path: string): string {
  return path.startsWith('/') ? join(stage.root, path) : join(stage.root, stage.workdir, path);
}

/** Every absolute path of a command or value, taken inside the stage (`:` separates PATH entries). */
function mapPaths(stage: Stage, text: string): string {
  return text.replace(/(^|[\s=:])\/(?!\/)/g, (_, before: string) => `${before}${stage.root}/`);
}

function expand(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{?(\w+)\}?/g, (_, name: string) => env[name] ?? '');
}

/** Programs that need root and change the machine they run on: not run here (see the file's head). */
const AS_ROOT = /^(apt-get|groupadd|useradd|chown)\b/;

function run(stage: Stage, command: string): void {
  for (const part of command.split('&&').map((text) => text.trim())) {
    if (AS_ROOT.test(part)) {
      stage.skipped.push(part);
      continue;
    }
    if (/^rm -rf \/var\/lib\/apt\/lists/.test(part)) continue; // apt-get's lists, which were never fetched
    const ran = spawnSync('sh', ['-c', mapPaths(stage, part)], {
      cwd: inStage(stage, stage.workdir),
      env: { ...stage.env, PATH: `${join(stage.root, 'usr/local/bin')}:${stage.env['PATH'] ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    stage.printed += ran.stdout + ran.stderr;
    if (ran.status !== 0)
      throw new Error(`the ${stage.name} stage's RUN ${part} failed (exit ${ran.status}):\n${ran.stdout}${ran.stderr}`);
  }
}

/** COPY as Docker does: a directory's contents into the destination, files into it (`dir/`) or as it. */
function copy(stage: Stage, args: string, stages: Stage[], context: string): void {
  const from = /^--from=(\S+)\s+/.exec(args);
  const paths = (from ? args.slice(from[0].length) : args).split(/\s+/);
  const destination = paths.pop() ?? '.';
  const source = from ? stages.find((one) => one.name === from[1]) : undefined;
  if (from && source === undefined) throw new Error(`COPY --from=${from[1]}: no such stage`);
  const ignored = source === undefined ? dockerignore(context) : () => false;
  const into = inStage(stage, destination);
  for (const path of paths) {
    const origin = source === undefined ? join(context, path) : inStage(source, path);
    const intoDir = statSync(origin).isDirectory() || destination.endsWith('/') || paths.length > 1;
    const target = statSync(origin).isDirectory() ? into : intoDir ? join(into, basename(path)) : into;
    mkdirSync(dirname(target), { recursive: true });
    cpSync(origin, target, {
      recursive: true,
      verbatimSymlinks: true,
      filter: (file) => source !== undefined || !ignored(relative(context, file)),
    });
  }
}

/** The context's .dockerignore as a test of a path relative to the context (names and `*.ext` at any depth). */
function dockerignore(context: string): (path: string) => boolean {
  const file = join(context, '.dockerignore');
  const patterns = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '' && !line.startsWith('#'))
    : [];
  const tests = patterns.map((pattern) =>
    pattern.startsWith('*')
      ? (path: string) => path.endsWith(pattern.slice(1))
      : (path: string) => path === pattern || path.startsWith(`${pattern}/`),
  );
  return (path) => path !== '' && tests.some((test) => test(path));
}

/** The files under `dir` (relative), for a listing in a failure message. */
export function listing(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : [];
}
