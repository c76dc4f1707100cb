import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { SandboxOptions } from '../../src/sandbox/index.js';

// The parent's side of sandbox-process.ts: the sandbox in a process of its own (forked with an IPC channel), as the
// soak and the e2e cut-over tests run it, so that it competes with the pushes for the machine as a real service would
// not share their event loop.

/** What the sandbox holds for one ACME account (sandbox-process.ts `dump`). */
export interface SandboxAccount {
  number: string;
  status: string;
  creates: number;
  /** The payload of the accepted create, as received. */
  payload: unknown;
  notes: string[];
  transactions: string[];
  statements: string[];
  paymentInstructions: string[];
}

export interface SandboxProcess {
  url: string;
  port: number;
  apiKey: string;
  dump(): Promise<SandboxAccount[]>;
  /** Finishes every process still PENDING or IN_PROGRESS now (control.settleAll); resolves with how many. */
  settle(): Promise<number>;
  close(): Promise<void>;
}

export async function startSandboxProcess(options: Partial<SandboxOptions>): Promise<SandboxProcess> {
  const child: ChildProcess = fork(path.join(import.meta.dirname, 'sandbox-process.ts'), [JSON.stringify(options)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const next = <T>(type: string): Promise<T> =>
    new Promise((resolve) => {
      const listener = (message: { type: string }): void => {
        if (message.type !== type) return;
        child.off('message', listener);
        resolve(message as T);
      };
      child.on('message', listener);
    });
  const ask = async <T>(type: string, answer: string): Promise<T> => {
    const answered = next<T>(answer);
    child.send({ type });
    return answered;
  };
  const ready = await next<{ url: string; apiKey: string }>('ready');
  return {
    url: ready.url,
    port: Number(new URL(ready.url).port),
    apiKey: ready.apiKey,
    dump: async () => (await ask<{ accounts: SandboxAccount[] }>('dump', 'dump')).accounts,
    settle: async () => (await ask<{ count: number }>('settle', 'settled')).count,
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send({ type: 'close' });
      }),
  };
}
