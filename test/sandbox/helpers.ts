import { startSandbox, type RunningSandbox, type SandboxHooks, type SandboxOptions } from '../../src/sandbox/index.js';

// Talks to a real sandbox over real HTTP (global fetch), as a client would.

export const TODAY = new Date().toISOString().slice(0, 10);
export const OPEN_PERIOD_START = `${TODAY.slice(0, 7)}-01`;

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

export interface Session {
  sandbox: RunningSandbox;
  token: string;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>;
  get(path: string, headers?: Record<string, string>): Promise<Answer>;
  /** Creates the account and waits until its process has finished. */
  importAccount(externalAccountNumber: string, extra?: Record<string, unknown>): Promise<void>;
}

export const TOKEN_QUERY =
  'mutation ObtainToken($input: ObtainJSONWebTokenInput!) { obtainKrakenToken(input: $input) { token refreshToken refreshExpiresIn payload } }';

export async function send(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text, the test says what it expects
  }
  return { status: response.status, body, headers: response.headers };
}

export async function obtainToken(url: string, apiKey: string): Promise<string> {
  const answer = await send(`${url}/v1/graphql/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: TOKEN_QUERY, variables: { input: { APIKey: apiKey } } }),
  });
  const token = answer.body?.data?.obtainKrakenToken?.token;
  if (typeof token !== 'string') throw new Error(`no token: ${JSON.stringify(answer.body)}`);
  return token;
}

export function account(externalAccountNumber: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    import_supplier: 'ACME',
    external_account_number: externalAccountNumber,
    account_type: 'DOMESTIC',
    customers: [{ given_name: 'Ada', family_name: 'Lovelace', email: 'ada@example.org', mobile: '+447911123456' }],
    supply_addresses: [
      {
        supply_address1: '1 High Street',
        supply_postcode: 'LS1 1AA',
        customer_at_supply_address_from_date: '2024-01-01',
      },
    ],
    ...extra,
  };
}

/** A clock the test moves by hand: the sandbox's processing, token expiry and rate bucket follow it. */
export function manualClock(start = Date.now()): { now: () => number; advance: (ms: number) => void } {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

export async function openSession(options: Partial<SandboxOptions> = {}, hooks: SandboxHooks = {}): Promise<Session> {
  const sandbox = await startSandbox({ processingMs: 0, ...options }, hooks);
  const token = await obtainToken(sandbox.url, sandbox.apiKey);
  const auth = (headers: Record<string, string>) => ({ authorization: token, ...headers });
  const session: Session = {
    sandbox,
    token,
    post: (path, body, headers = {}) =>
      send(`${sandbox.url}${path}`, {
        method: 'POST',
        headers: auth({ 'content-type': 'application/json', ...headers }),
        body: JSON.stringify(body),
      }),
    get: (path, headers = {}) => send(`${sandbox.url}${path}`, { method: 'GET', headers: auth(headers) }),
    importAccount: async (externalAccountNumber, extra = {}) => {
      const answer = await session.post('/v2/data-import/accounts/', {
        payload: account(externalAccountNumber, extra),
      });
      if (answer.status !== 201)
        throw new Error(`create ${externalAccountNumber}: ${answer.status} ${JSON.stringify(answer.body)}`);
      sandbox.control.settleAll();
    },
  };
  return session;
}
