import { CallRunner, type ClientStats } from './client.js';
import {
  createAccountCall,
  importStatusCall,
  listCall,
  notesCall,
  paymentInstructionCall,
  statementsCall,
  transactionsCall,
  transferStatusCall,
  validateAccountCall,
} from './endpoints.js';
import type { ClientOptions } from './options.js';
import type { ImportServiceClient } from './types.js';

// The client of the account migration import service. Everything the engine and the
// commands need is exported from here.

export type { ClientEvent } from './events.js';
export type { ClientOptions, HeaderForm } from './options.js';
export { describeProxies, type ProxySettings } from './proxy.js';
export { bodyExcerpt } from './body-excerpt.js';
export type { ClientStats } from './client.js';
export * from './errors.js';
export * from './retry-policy.js';
export { type Credentials } from './token-manager.js';
export type * from './types.js';

/** The import-service client plus its live pace, for progress displays. */
export interface ServiceClient extends ImportServiceClient {
  /** Current concurrency limit, in-flight and queued requests, rate cap, counters. */
  stats(): ClientStats;
  /** The access token obtained now (a refused key rejects with an AuthenticationError); see CallRunner. */
  authenticate(): Promise<void>;
}

/** Builds the client; throws a UsageError for a bad option (e.g. a plain-http non-loopback base URL). */
export function createImportServiceClient(options: ClientOptions): ServiceClient {
  const runner = new CallRunner(options);
  return {
    validateAccount: (payload, call) => runner.run(validateAccountCall(payload), call),
    createAccount: (payload, call) => runner.run(createAccountCall(payload, runner.wire), call),
    getImportStatus: (supplier, external, call) => runner.run(importStatusCall(supplier, external), call),
    getTransferStatus: (supplier, external, call) => runner.run(transferStatusCall(supplier, external), call),
    listAllImports: (supplier, collect, call) => runner.run(listCall('all', supplier, collect), call),
    listPendingImports: (supplier, collect, call) => runner.run(listCall('pending', supplier, collect), call),
    listImportedAccounts: (supplier, collect, call) => runner.run(listCall('imported', supplier, collect), call),
    createNotes: (request, call) => runner.run(notesCall(request), call),
    createTransactions: (request, flags, call) => runner.run(transactionsCall(request, flags), call),
    createHistoricalStatements: (request, call) => runner.run(statementsCall(request), call),
    createPaymentInstruction: (request, call) => runner.run(paymentInstructionCall(request), call),
    stats: () => runner.stats(),
    authenticate: () => runner.authenticate(),
    close: () => runner.close(),
  };
}
