import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Command, CommanderError } from 'commander';
import { ExitCode, messageOf, MigrateError, UsageError, visibleText } from '../errors.js';
import { sweepLeftDirs } from '../private-files.js';
import { registerValidateCommand } from '../commands/validate/index.js';
import { registerPushCommand } from '../commands/push/index.js';
import { registerSandboxCommand } from '../commands/sandbox/index.js';
import { registerReportCommand } from '../commands/report/index.js';
import { registerStatusCommand } from '../commands/status/index.js';
import { registerLedgerCommand } from '../commands/ledger/index.js';
import { registerShapeCommand } from '../commands/shape/index.js';
import { teachHelp } from './help.js';
import { registerHelpCommand } from './help-topics.js';
import { registerCompletionCommand } from './completion.js';
import { registerConfigCommand } from '../commands/config/index.js';
import { registerRunConfig } from '../commands/common/run-config.js';

/**
 * The one entry and exit of the CLI: builds the program, runs the command, and turns its
 * result or error into an exit code. Commands return an exit code or throw a MigrateError.
 */
export async function main(argv: string[]): Promise<number> {
  stopQuietlyWhenTheReaderGoes();
  // What a killed process left of customers' data (docs/data-protection.md): removed before anything else runs.
  sweepLeftDirs(tmpdir());
  let exitCode: number = ExitCode.ok;
  const program = createProgram((code) => {
    exitCode = code;
  });
  try {
    refuseKeyInArgv(argv);
    await program.parseAsync(argv);
    return exitCode;
  } catch (error) {
    return reportError(error);
  }
}

/**
 * `migrate push DIR --api-key KEY`: there is no such option, on purpose. Said so, with what to use, instead of
 * commander's bare "unknown option" (the sandbox keeps its --api-key, the key it accepts, with a warning).
 */
function refuseKeyInArgv(argv: string[]): void {
  const words = argv.slice(2);
  if (words[0] === 'sandbox' || !words.some((word) => word === '--api-key' || word.startsWith('--api-key='))) return;
  throw new UsageError(
    'there is no --api-key option: a key on the command line is seen by every user of this machine (ps) and kept ' +
      'in shell history. Give it in the environment (MIGRATE_API_KEY) or in a file readable only by you ' +
      '(--api-key-file FILE); `migrate help environment` lists the variables.',
    'api_key_in_argv',
  );
}

let watchingPipes = false;

/**
 * `migrate validate DIR | head`: once the reader of stdout or stderr has gone, writing fails with
 * EPIPE. What is left to print is dropped, quietly (no stack trace); the command finishes (a push
 * its run) and exits with its own code.
 */
function stopQuietlyWhenTheReaderGoes(): void {
  if (watchingPipes) return;
  watchingPipes = true;
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // EIO: the terminal hung up (a closed ssh session; push goes on to its summary after SIGHUP).
      if (error.code !== 'EPIPE' && error.code !== 'EIO' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    });
}

/** The whole program, every command registered; `setExitCode` receives what a command's action returns. */
export function createProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('migrate')
    .version(packageVersion(), '-V, --version')
    .description('Migrate customer accounts from legacy exports into the billing platform through its import service.')
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });

  // Each command file exports register<Verb>Command(program, setExitCode).
  registerValidateCommand(program, setExitCode);
  registerShapeCommand(program, setExitCode);
  registerPushCommand(program, setExitCode);
  registerSandboxCommand(program, setExitCode);
  registerReportCommand(program, setExitCode);
  registerStatusCommand(program, setExitCode);
  registerLedgerCommand(program, setExitCode);
  registerRunConfig(program);
  registerConfigCommand(program);
  registerCompletionCommand(program);
  registerHelpCommand(program);
  teachHelp(program);
  return program;
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has printed its message already; --help and --version end with exit code 0.
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  if (error instanceof MigrateError) {
    process.stderr.write(`migrate: ${visibleText(error.message)}\n`);
    return error.exitCode;
  }
  const message = messageOf(error);
  process.stderr.write(`migrate: internal error: ${visibleText(message)}\n`);
  if (process.env['MIGRATE_DEBUG'] && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  else process.stderr.write('Set MIGRATE_DEBUG=1 to print the stack trace, and report it.\n');
  return ExitCode.fatal;
}

/**
 * `0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-27T03:40:00.000Z)`: the version in package.json and what the build
 * recorded (dist/build-info.json, written by the bundler). dist/cli/main.js and src/cli/main.ts both sit two levels
 * below the package root; a run from src/ (tests through tsx) has no build to name.
 */
function packageVersion(): string {
  const root = new URL('../../', import.meta.url);
  const manifest = readJson(new URL('package.json', root)) as { version?: string } | undefined;
  const build = readJson(new URL('dist/build-info.json', root)) as { commit?: string; date?: string } | undefined;
  const version = manifest?.version ?? 'unknown';
  return build === undefined
    ? version
    : `${version} (commit ${build.commit ?? 'unknown'}, built ${build.date ?? 'unknown'})`;
}

function readJson(url: URL): unknown {
  try {
    return JSON.parse(readFileSync(url, 'utf8'));
  } catch {
    return undefined;
  }
}
