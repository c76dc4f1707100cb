import { ExitCode, MigrateError, type InterruptedError } from './errors.js';
import { removeHeldNow } from './private-files.js';

// SIGINT (Ctrl-C), SIGTERM (systemd, docker stop, kill) and SIGHUP (the terminal or ssh session closed) stop a command
// the same way: its stop signal aborts, the shape engine interrupts its running query, and the command ends through
// its own cleanup (the engine's files removed) with exit 130. A command whose work has nothing to finish (validate,
// shape) is also stopped at once by a second signal, or when it has not ended a few seconds after the first: its
// places removed here, exit 130.

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** How long a command that stops at once may take to end through its own cleanup after a stop signal. */
const STOP_WITHIN_MS = 5_000;

const NEVER = new AbortController().signal;
let current: AbortSignal | undefined;

/** The running command's stop: aborted by SIGINT, SIGTERM or SIGHUP; one that never aborts outside a command. */
export function stopSignal(): AbortSignal {
  return current ?? NEVER;
}

export interface StopRules {
  /** The error the command ends with when stopped (exit 130), saying what was done and what to do. */
  interrupted: () => InterruptedError;
  /** Nothing to finish: a second signal, or the first unanswered for a few seconds, ends the process at once. */
  atOnce: boolean;
}

/**
 * Runs `work` with the stop signals aborting its signal (and `stopSignal()`). Once stopped, whatever error `work` ends
 * with, but an interruption of its own, is the command's interruption (exit 130); work that finished all the same
 * (the signal came as it ended) returns its result, which is then true.
 */
export async function untilStopped<T>(rules: StopRules, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let deadline: NodeJS.Timeout | undefined;
  const onSignal = (): void => {
    if (!rules.atOnce) return controller.abort();
    if (controller.signal.aborted) return stopNow(rules);
    controller.abort();
    deadline = setTimeout(() => stopNow(rules), STOP_WITHIN_MS);
  };
  // Push keeps its second signal for the system's default (the process ends at once, the ledger consistent).
  for (const name of STOP_SIGNALS) {
    if (rules.atOnce) process.on(name, onSignal);
    else process.once(name, onSignal);
  }
  const outer = current;
  current = controller.signal;
  try {
    return await work(controller.signal);
  } catch (error) {
    if (!controller.signal.aborted || (error instanceof MigrateError && error.exitCode === ExitCode.interrupted))
      throw error;
    throw rules.interrupted();
  } finally {
    clearTimeout(deadline);
    current = outer;
    for (const name of STOP_SIGNALS) process.off(name, onSignal);
  }
}

/** The command did not end in time: its places removed, the message printed, exit 130, now. */
function stopNow(rules: StopRules): never {
  removeHeldNow();
  process.stderr.write(`migrate: ${rules.interrupted().message}\n`);
  // The one exit outside the CLI's main: the command's own code may be busy in a loop that never looks at the stop.
  process.exit(ExitCode.interrupted);
}
