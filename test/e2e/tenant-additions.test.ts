import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { expectExactState, push } from './helpers.js';

// The interface as tenants grow it (spec "Versioning": additions to existing endpoints may appear), through the real
// binary against the sandbox answering as they do: the French tenants' v1 status words, a throttled token mutation,
// the JWT header form.

let root: string;
let sandbox: RunningSandbox | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'tenant-additions-'));
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function tokenRequests(running: RunningSandbox) {
  return running.inspect.requests().filter((entry) => entry.path === '/v1/graphql/');
}

describe.each(['PENDING', 'IN_PROGRESS', 'REJECTED'])(
  'v1 transfer status %s with the account number (Octopus Energy France, Plenitude France)',
  (word) => {
    it('the account exists: the push ends exit 0 with every account and record sent, as the export holds them', async () => {
      sandbox = await startSandbox({ processingMs: 100, transferStatusWord: word });
      const dir = join(root, word);
      const data = writeE2eExport(dir, 30, `FR${word.slice(0, 2)}`, 'spec', { clean: true });
      const run = await push(sandbox, data.dir, join(dir, 'state'), ['--concurrency', '4', '--wait-timeout', '60']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(/in a row|unexpected/);
      await expectExactState(sandbox, data, join(dir, 'state'), expect);
      // Settled by v1 alone: the number came with the word, so v2 was asked only while accounts were processing.
      const transfer = sandbox.inspect.requests().filter((entry) => entry.path.includes('account-transfer-status'));
      expect(transfer.every((entry) => entry.status === 200)).toBe(true);
    });
  },
);

describe('a status word the spec does not give while an account processes (QUEUED_FOR_REVIEW on v1 and v2)', () => {
  it('is read as not finished: the push ends exit 0, the export landed, the word said once on stderr and in the log', async () => {
    sandbox = await startSandbox({ processingMs: 3000, processingStatusWord: 'QUEUED_FOR_REVIEW' });
    const dir = join(root, 'queued');
    const data = writeE2eExport(dir, 12, 'QFR', 'spec', { clean: true });
    const log = join(dir, 'push.ndjson');
    const run = await push(sandbox, data.dir, join(dir, 'state'), ['--concurrency', '4', '--log-file', log]);
    expect(run.code, run.stderr).toBe(0);
    await expectExactState(sandbox, data, join(dir, 'state'), expect);
    const said = run.stderr.split('\n').filter((line) => line.includes('QUEUED_FOR_REVIEW'));
    expect(said).toEqual([
      'migrate: warning: getImportStatus answered the status "QUEUED_FOR_REVIEW", a word the spec does not give: ' +
        'read as "not finished", the account is asked again (said once per word)',
    ]);
    const logged = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"status_word"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toEqual([expect.objectContaining({ event: 'status_word', word: 'QUEUED_FOR_REVIEW' })]);
  });
});

describe('the token mutation throttled (KT-CT-1199 in an HTTP 200)', () => {
  it('the push waits, completes, and at most a handful of token requests reach the service, never two at once', async () => {
    // Refused: the first token request, and any in the first 4 s of the sandbox's clock.
    sandbox = await startSandbox({ processingMs: 50, throttleTokenRequests: 1, throttleTokenMs: 4000 });
    const dir = join(root, 'throttled');
    const data = writeE2eExport(dir, 20, 'THR', 'spec', { clean: true });
    const run = await push(sandbox, data.dir, join(dir, 'state'), ['--concurrency', '8']);
    expect(run.code, run.stderr).toBe(0);
    await expectExactState(sandbox, data, join(dir, 'state'), expect);
    const tokens = tokenRequests(sandbox);
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    expect(tokens.length).toBeLessThanOrEqual(3);
    for (const [index, entry] of tokens.entries())
      expect(entry.startedAt, 'one token request at a time').toBeGreaterThanOrEqual(tokens[index - 1]?.endedAt ?? 0);
  });
});

describe('--header-form jwt', () => {
  it('sends Authorization: JWT <token>, which the sandbox takes: the push ends exit 0', async () => {
    sandbox = await startSandbox({ processingMs: 0 });
    const dir = join(root, 'jwt');
    const data = writeE2eExport(dir, 5, 'JWT', 'spec', { clean: true });
    const run = await push(sandbox, data.dir, join(dir, 'state'), ['--header-form', 'jwt']);
    expect(run.code, run.stderr).toBe(0);
    await expectExactState(sandbox, data, join(dir, 'state'), expect);
  });
});
