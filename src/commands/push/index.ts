import type { Command } from 'commander';
import { monotonicNow } from '../../clock.js';
import { InterruptedError } from '../../errors.js';
import { untilStopped } from '../../stop-signals.js';
import { loadServiceConfig } from '../../config/service.js';
import { dryRunPush } from './dry-run.js';
import { runOriginOfCommand } from '../common/run-config.js';
import { givenShapeLimits } from '../common/shape-limits.js';
import { registerPushFlags, type PushFlags } from './flags.js';
import { openPushRun } from './open-run.js';
import { readPushInputs, resolvePushConfig, stampOutput } from './resolve.js';
import { pushOnRun, tellEntries } from './run.js';

// `migrate push <dir>` (README.md beside this file): read what the configuration needs, resolve it once, open the
// run, push, print. Exit codes: README "Exit codes".

export function registerPushCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('push')
    .description(
      'Push an export into the import service exactly once: create accounts, wait for processing, add notes, ' +
        'transactions, statements and payment instructions. Resumable; results in the ledger (--state).',
    )
    .argument('<dir>', 'the export directory');
  registerPushFlags(command).action(async (dir: string, options: Omit<PushFlags, 'dir'>) => {
    stampOutput({ ...options, dir }, process.env);
    const origin = runOriginOfCommand(command);
    setExitCode(await pushCommand({ ...options, dir, origin, shapeLimits: givenShapeLimits(command, process.env) }));
  });
}

/** `migrate push <dir>`: returns the exit code. */
export function pushCommand(flags: PushFlags): Promise<number> {
  // Installed first: a signal during start-up, shaping or staging also stops the run cleanly (exit 130). SIGINT,
  // SIGTERM and SIGHUP (the ssh session or terminal closed) stop a push as Ctrl-C does: in-flight requests finish,
  // the summary is printed, exit 130.
  const interrupted = (): InterruptedError => new InterruptedError('by a stop signal');
  return untilStopped({ interrupted, atOnce: false }, (signal) => pushWithSignal(flags, signal));
}

async function pushWithSignal(flags: PushFlags, signal: AbortSignal): Promise<number> {
  const startedAt = monotonicNow();
  const config = resolvePushConfig(await readPushInputs(flags, process.env, process.cwd()));
  // The service's settings, checked without a request (undefined with --sandbox: the sandbox's, once it runs).
  const service =
    config.service.sandbox === undefined
      ? await loadServiceConfig({
          ...{ flags: config.service.flags, dialect: config.service.dialect, file: config.mapping },
          ...{ env: process.env, cwd: process.cwd() },
        })
      : undefined;
  if (config.dryRun) return dryRunPush(config, service, signal);
  tellEntries(config.exportFiles);
  await using run = await openPushRun(config, { service, signal });
  return await pushOnRun(config, run, startedAt);
}
