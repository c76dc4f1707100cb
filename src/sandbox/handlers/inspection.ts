import { inspect } from '../inspected.js';
import type { Handler } from './common.js';

/**
 * `GET /_sandbox/accounts/<supplier>/`: every import process of the supplier as the sandbox holds it (the create
 * payload as received, notes, transactions, statements, payment instructions), in creation order. Not part of the
 * service: for a rehearsal or a test to compare what arrived with the export, when the sandbox runs in another process.
 */
export const inspectAccounts: Handler = ({ store, params, now }) => ({
  status: 200,
  body: store.list(params[0] ?? '', now).map(inspect),
});
