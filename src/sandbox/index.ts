import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TokenIssuer } from './auth.js';
import { TokenThrottle } from './token-throttle.js';
import { FaultInjector } from './faults.js';
import { createControl, createInspector, type SandboxControl, type SandboxInspector } from './inspector.js';
import { resolveSandboxOptions, type SandboxOptions } from './options.js';
import { RequestLog } from './request-log.js';
import { createRequestListener, type SandboxRuntime } from './server.js';
import { ProcessStore } from './store.js';

// `migrate sandbox` in-process: a faithful local simulator of the import service,
// used by the CLI command, by tests and by the `--sandbox` runs of the other commands.

export type { SandboxOptions } from './options.js';
export { DEFAULT_API_KEY, DEFAULT_SUPPLIERS, parseSuppliers, resolveSandboxOptions } from './options.js';
export type { SandboxControl, SandboxInspector } from './inspector.js';

export interface RunningSandbox {
  /** `http://HOST:PORT` without a trailing slash: the service's {base_url}. */
  url: string;
  /** The API key the token mutation accepts. */
  apiKey: string;
  /** The resolved options (suppliers as configured at start). */
  options: Readonly<SandboxOptions>;
  /** Stops listening, ends every connection and pending latency timer. */
  close(): Promise<void>;
  inspect: SandboxInspector;
  control: SandboxControl;
}

function createRuntime(options: SandboxOptions, hooks: SandboxHooks): SandboxRuntime {
  const clock = hooks.clock ?? Date.now;
  return {
    options,
    clock,
    tokenThrottle: new TokenThrottle(options, clock()),
    ...(hooks.delay ? { delay: hooks.delay } : {}),
    store: new ProcessStore(options.suppliers, options),
    issuer: new TokenIssuer(options.tokenTtlSeconds, options.refreshTtlSeconds),
    faults: new FaultInjector(options, options.seed),
    log: new RequestLog(options.recordRequests),
    flakyCounts: new Map(),
    timers: new Set(),
    trickling: new Set(),
  };
}

function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      resolve(`http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`);
    });
  });
}

/** In-process only: what a test replaces to drive the sandbox's time instead of sleeping. */
export interface SandboxHooks {
  /** Epoch milliseconds (default Date.now): when processes finish, tokens expire and the rate bucket turns. */
  clock?: () => number;
  /**
   * Holds an answer for the latency and jitter (--latency-ms, --jitter-ms) or a lost answer (default: a timer of that
   * many milliseconds): a test sees each delay asked for and decides when it ends.
   */
  delay?: (ms: number) => Promise<void>;
}

/** Starts the sandbox (127.0.0.1, a free port by default). Throws a RangeError for a bad option. */
export async function startSandbox(
  options: Partial<SandboxOptions> = {},
  hooks: SandboxHooks = {},
): Promise<RunningSandbox> {
  const resolved = resolveSandboxOptions(options);
  const runtime = createRuntime(resolved, hooks);
  const server = createServer({ keepAlive: true }, createRequestListener(runtime));
  // Above undici's keep-alive (4 s) so the server never closes a socket the client is about to reuse.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const url = await listen(server, resolved.port, resolved.host);
  let closing: Promise<void> | undefined;
  return {
    url,
    apiKey: resolved.apiKey,
    options: resolved,
    inspect: createInspector(runtime),
    control: createControl(runtime),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of runtime.timers) clearTimeout(timer);
        runtime.timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
