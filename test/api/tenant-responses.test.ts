import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImportServiceClient, type ServiceClient } from '../../src/api/index.js';
import { listItems } from './helpers/list-items.js';
import { json, startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';

// Answers as tenants' published documents give them (docs/real-platform.md "Responses as tenants document them"):
// fields the document marks optional left out, and the notes answer as one object. Each is read, not taken as an
// unexpected answer; over real HTTP from a scripted server.

const AT = '2025-10-07T09:00:21.179194+02:00';
const NOTE = { import_supplier: 'ACME', external_account_number: 'X-1', notes: [{ body: 'Moved in' }] };

let server: ScriptedServer;
let client: ServiceClient;
/** The notes answer the server gives next. */
let notesAnswer: unknown;

beforeAll(async () => {
  server = await startScriptedServer((request, response) => {
    const url = request.url;
    if (url.startsWith('/v2/data-import/accounts/ACME/'))
      return json(response, 200, {
        status: 'PROCESSED',
        kraken_identifier: 'K-1',
        created_at: AT,
        modified_at: AT,
        latest_event: { event: 'EVENT_ACCOUNT_IMPORT_PROCESS_PROCESSED', occurred_at: AT, data: null },
      });
    if (url.startsWith('/v1/data-import/account-transfer-status/'))
      return json(response, 200, { status: 'IN_PROGRESS' });
    if (url.startsWith('/v1/data-import/all-account-import-processes/'))
      return json(response, 200, [
        { external_account_number: 'X-1' },
        { external_account_number: 'X-2', kraken_account_number: 'A-1234ABCD', account_created_at: AT },
      ]);
    if (url.startsWith('/v1/data-import/notes/create/')) return json(response, 201, notesAnswer);
    return json(response, 404, { detail: 'no such path' });
  });
  client = createImportServiceClient({ baseUrl: server.url, credentials: { apiKey: 'k' }, dialect: 'kraken' });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

describe('answers with the optional parts a tenant leaves out', () => {
  it('a v2 status without latest_error reads as none', async () => {
    expect(await client.getImportStatus('ACME', 'X-1')).toMatchObject({
      status: 'PROCESSED',
      platform_identifier: 'K-1',
      latest_error: null,
    });
  });

  it('a transfer status without its account number reads as the empty number (no account yet)', async () => {
    expect(await client.getTransferStatus('ACME', 'X-1')).toMatchObject({
      status: 'IN_PROGRESS',
      platform_account_number: '',
    });
  });

  it('a list entry with only its external account number reads as pending', async () => {
    const items = await client.listAllImports('ACME', listItems);
    expect(
      items.map(({ external_account_number, platform_account_number, account_created_at }) => ({
        external_account_number,
        platform_account_number,
        account_created_at,
      })),
    ).toEqual([
      { external_account_number: 'X-1', platform_account_number: null, account_created_at: null },
      { external_account_number: 'X-2', platform_account_number: 'A-1234ABCD', account_created_at: AT },
    ]);
  });

  it('a note result without created_at, in a list or answered as one object', async () => {
    notesAnswer = [{ body: 'Moved in', status: 'NOTE_CREATION_SUCCESS' }];
    expect(await client.createNotes(NOTE)).toEqual({
      kind: 'created',
      results: [{ body: 'Moved in', created_at: null, status: 'NOTE_CREATION_SUCCESS' }],
    });
    notesAnswer = { status: 'NOTE_ALREADY_EXISTS', body: 'Moved in', created_at: AT };
    expect(await client.createNotes(NOTE)).toEqual({
      kind: 'created',
      results: [{ body: 'Moved in', created_at: AT, status: 'NOTE_ALREADY_EXISTS' }],
    });
  });
});
