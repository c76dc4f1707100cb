import {
  createImportServiceClient,
  type ClientEvent,
  type ClientOptions,
  type ServiceClient,
} from '../../../src/api/index.js';
import type { AccountPayload } from '../../../src/schema/index.js';
import {
  startSandbox,
  type RunningSandbox,
  type SandboxHooks,
  type SandboxOptions,
} from '../../../src/sandbox/index.js';

export interface Harness {
  sandbox: RunningSandbox;
  client: ServiceClient;
  events: ClientEvent[];
  close(): Promise<void>;
}

/** A sandbox in-process and a client of it (fast retries: tests should not sleep long). */
export async function startHarness(
  sandboxOptions: Partial<SandboxOptions> = {},
  clientOptions: Partial<ClientOptions> = {},
  sandboxHooks: SandboxHooks = {},
): Promise<Harness> {
  const sandbox = await startSandbox({ processingMs: 0, ...sandboxOptions }, sandboxHooks);
  const events: ClientEvent[] = [];
  const client = createImportServiceClient({
    baseUrl: sandbox.url,
    credentials: { apiKey: sandbox.apiKey },
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    onEvent: (event) => events.push(event),
    ...clientOptions,
  });
  return {
    sandbox,
    client,
    events,
    close: async () => {
      await client.close();
      await sandbox.close();
    },
  };
}

/** A valid domestic account of supplier ACME. */
export function account(externalAccountNumber: string, changes: Partial<AccountPayload> = {}): AccountPayload {
  return {
    import_supplier: 'ACME',
    external_account_number: externalAccountNumber,
    account_type: 'DOMESTIC',
    customers: [{ given_name: 'Ann', family_name: 'Smith', email: 'ann.smith@example.org', mobile: '+447911123456' }],
    supply_addresses: [
      {
        supply_address1: '1 High Street',
        supply_postcode: 'LS1 1AA',
        customer_at_supply_address_from_date: '2024-01-01',
      },
    ],
    billing_address: { street_address: '1 High Street', locality: 'Leeds', postal_code: 'LS1 1AA', country: 'GB' },
    ...changes,
  };
}

/** Today (UTC), inside the sandbox's default open statement period. */
export function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/**
 * One virtual clock for the client and the sandbox: it moves only when the client waits (its sleep moves it at once)
 * or the test moves it, so token lifetimes, the rate bucket and the client's pacing follow it, not the machine's speed.
 */
export function virtualTime(start = Date.UTC(2026, 10, 25, 12)): {
  now: () => number;
  advance: (ms: number) => void;
  sleeps: number[];
  client: Pick<ClientOptions, 'clock' | 'sleep'>;
  sandbox: SandboxHooks;
} {
  let now = start;
  const sleeps: number[] = [];
  const advance = (ms: number): void => {
    now += ms;
  };
  return {
    now: () => now,
    advance,
    sleeps,
    client: {
      clock: { now: () => now },
      sleep: (ms) => {
        sleeps.push(ms);
        advance(ms);
        return Promise.resolve();
      },
    },
    sandbox: { clock: () => now },
  };
}
