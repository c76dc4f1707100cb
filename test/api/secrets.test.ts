import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImportServiceClient, type ClientEvent } from '../../src/api/index.js';
import { loadServiceConfig, describeServiceConfig } from '../../src/config/service.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { account, virtualTime } from './helpers/sandbox-client.js';
import { json, startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';

// The API key and every token stay out of output, events, errors and their cause chains, across
// failures of every kind, even when a hostile or buggy service echoes them back.

const API_KEY = 'sk-live-SECRET-api-key-0123456789';

/** Everything a caller could print or log about an error. */
function renderings(error: unknown): string {
  const parts: string[] = [inspect(error, { depth: 10 }), JSON.stringify(error) ?? ''];
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    parts.push(current.message, current.stack ?? '', String(current));
  }
  return parts.join('\n');
}

let output = '';
const originalStdout = process.stdout.write.bind(process.stdout);
const originalStderr = process.stderr.write.bind(process.stderr);
beforeAll(() => {
  // Captured, not passed on: the test prints everything it can and reads it back.
  const capture = ((chunk: string | Uint8Array) => {
    output += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = capture;
  process.stderr.write = capture;
});
afterAll(() => {
  process.stdout.write = originalStdout;
  process.stderr.write = originalStderr;
});

describe('secrets never appear', () => {
  let sandbox: RunningSandbox;
  let echo: ScriptedServer;
  const tokens = new Set<string>();

  // The sandbox and the client that renews its tokens share a virtual clock: tokens expire as the test moves it.
  const time = virtualTime();
  beforeAll(async () => {
    sandbox = await startSandbox(
      {
        apiKey: API_KEY,
        processingMs: 0,
        tokenTtlSeconds: 0.5,
        seed: 3,
        failRate: 0.2,
        dropRate: 0.1,
        ambiguousRate: 0.1,
        rateLimitRate: 0.1,
        retryAfterSeconds: 0,
      },
      time.sandbox,
    );
    // A service that echoes the Authorization header and the request body (the token mutation's body holds the key).
    echo = await startScriptedServer((request, response) => {
      tokens.add(String(request.headers.authorization));
      if (request.url.includes('/notes/'))
        json(response, 500, { detail: `failed for ${request.headers.authorization} ${request.body}` });
      else if (request.url.includes('/accounts/validate/'))
        json(response, 400, {
          detail: `bad ${request.headers.authorization}`,
          code: 'x',
          errors: [{ attr: '', code: 'x', detail: String(request.headers.authorization) }],
        });
      else json(response, 401, { detail: `Token ${request.headers.authorization} refused` });
    });
  });
  afterAll(async () => {
    await sandbox.close();
    await echo.close();
  });

  it('across faults, renewals, 401s, a wrong key and echoing services', async () => {
    const events: ClientEvent[] = [];
    const errors: unknown[] = [];
    const onEvent = (event: ClientEvent) => {
      events.push(event);
      process.stdout.write(`${JSON.stringify(event)}\n`);
    };
    const collect = async (promise: Promise<unknown>) => {
      try {
        process.stdout.write(`${inspect(await promise, { depth: 10 })}\n`);
      } catch (error) {
        errors.push(error);
        process.stderr.write(`${renderings(error)}\n`);
      }
    };
    const retry = { baseDelayMs: 1, maxDelayMs: 5 };
    const faulty = createImportServiceClient({
      baseUrl: sandbox.url,
      credentials: { apiKey: API_KEY },
      onEvent,
      retry,
      maxRetries: 2,
      rateLimitPauseMs: 5,
      ...time.client,
    });
    const wrongKey = createImportServiceClient({
      baseUrl: sandbox.url,
      credentials: { apiKey: `${API_KEY}-wrong` },
      onEvent,
      retry,
    });
    const echoed = createImportServiceClient({
      baseUrl: echo.url,
      credentials: { apiKey: API_KEY },
      onEvent,
      retry,
      maxRetries: 1,
    });
    for (let index = 0; index < 20; index += 1) {
      await collect(faulty.createAccount(account(`K-${index}`)));
      await collect(
        faulty.createPaymentInstruction({
          import_supplier: 'ACME',
          external_account_number: `K-${index}`,
          vendor: 'STRIPE',
          reference: `pi-${index}`,
          type: 'CARD',
        }),
      );
      time.advance(30);
    }
    await collect(wrongKey.getImportStatus('ACME', 'K-1'));
    await collect(echoed.getImportStatus('ACME', 'K-1'));
    await collect(
      echoed.createNotes({ import_supplier: 'ACME', external_account_number: 'K-1', notes: [{ body: 'x' }] }),
    );
    await collect(echoed.validateAccount(account('K-1')));
    await Promise.all([faulty.close(), wrongKey.close(), echoed.close()]);

    expect(errors.length).toBeGreaterThan(3);
    expect(events.some((event) => event.type === 'token_renewed' && event.reason === 'expiring')).toBe(true);
    const secrets = [API_KEY, ...[...tokens].map((header) => header.replace(/^Token /, ''))].filter(
      (value) => value.length > 8,
    );
    expect(secrets.length).toBeGreaterThan(1);
    const everything = [output, JSON.stringify(events), ...errors.map(renderings)].join('\n');
    expect(everything).toContain('[REDACTED]');
    for (const secret of secrets) {
      const at = everything.indexOf(secret);
      expect(at === -1 ? '' : everything.slice(Math.max(0, at - 300), at + 20)).toBe('');
    }
    expect(everything).not.toContain('SECRET');
  });

  it('a key holding ", \\, %, +, /, spaces and non-ASCII, echoed in every encoding: no form of it in errors, values or events', async () => {
    const key = 'sk "live" \\ 100% +/ Zoë ключ';
    const echoing = await startSandbox({ apiKey: key, echoCredentials: true, processingMs: 0 });
    const events: ClientEvent[] = [];
    const client = createImportServiceClient({
      baseUrl: echoing.url,
      credentials: { apiKey: key },
      onEvent: (e) => events.push(e),
    });
    const wrong = createImportServiceClient({ baseUrl: echoing.url, credentials: { apiKey: `${key}!` } });
    try {
      const seen: unknown[] = [];
      const keep = async (promise: Promise<unknown>) =>
        seen.push(await promise.catch((error: unknown) => renderings(error)));
      await keep(client.createAccount(account('ERR-E-1')));
      echoing.control.settleAll();
      await keep(client.getImportStatus('ACME', 'ERR-E-1'));
      await keep(
        client.createNotes({ import_supplier: 'ACME', external_account_number: 'E-2', notes: [{ body: 'x' }] }),
      );
      await keep(client.validateAccount(account('E-3', { billing_email: 'not-an-email' })));
      await keep(wrong.getImportStatus('ACME', 'E-4'));
      const everything = [inspect(seen, { depth: 10 }), JSON.stringify(seen), JSON.stringify(events)].join('\n');
      expect(everything).toContain('[REDACTED]');
      expect(everything).toContain('[echo: Authorization');
      const escaped = JSON.stringify(key).slice(1, -1);
      for (const form of [
        key,
        escaped,
        escaped.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
        encodeURIComponent(key),
        encodeURIComponent(key)
          .replace(/%20/g, '+')
          .replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase()),
        Buffer.from(`${key}:`).toString('base64'),
        'Zoë ключ',
      ])
        expect(everything.includes(form), form).toBe(false);
    } finally {
      await Promise.all([client.close(), wrong.close()]);
      await echoing.close();
    }
  });

  it('the service config hides its credentials from JSON, inspect and its description', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'migrate-key-'));
    try {
      const file = join(dir, 'key.txt');
      await writeFile(file, `${API_KEY}\n`, { mode: 0o600 });
      const config = await loadServiceConfig({
        flags: { baseUrl: 'https://api.example.energy', apiKeyFile: file },
        env: {},
        cwd: dir,
        dialect: 'spec',
      });
      expect(config.credentials.apiKey).toBe(API_KEY);
      for (const text of [
        JSON.stringify(config),
        inspect(config, { depth: 10 }),
        describeServiceConfig(config),
        String(config),
      ]) {
        expect(text).not.toContain('SECRET');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
