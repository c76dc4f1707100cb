import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ExitCode, MigrateError } from '../errors.js';
import { registerValidateCommand } from './validate.js';
import { registerPushCommand } from './push.js';
import { registerSandboxCommand } from './sandbox.js';
import { registerReportCommand } from './report.js';
import { registerStatusCommand } from './status.js';
import { registerLedgerCommand } from './ledger.js';
import { registerShapeCommand } from './shape.js';
import { teachHelp } from './help.js';

/**
 * The one entry and exit of the CLI: builds the program, runs the command, and turns its
 * result or error into an exit code. Commands return an exit code or throw a MigrateError.
 */
export async function main(argv: string[]): Promise<number> {
  stopQuietlyWhenTheReaderGoes();
  let exitCode: number = ExitCode.ok;
  const program = createProgram((code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (error) {
    return reportError(error);
  }
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
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
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
  teachHelp(program);
  return program;
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has printed its message already; --help and --version end with exit code 0.
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  if (error instanceof MigrateError) {
    process.stderr.write(`migrate: ${error.message}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`migrate: internal error: ${message}\n`);
  if (process.env['MIGRATE_DEBUG'] && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  else process.stderr.write('Set MIGRATE_DEBUG=1 to print the stack trace, and report it.\n');
  return ExitCode.fatal;
}

/** The version in package.json (dist/cli/main.js and src/cli/main.ts both sit two levels below it). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return manifest.version ?? 'unknown';
}
