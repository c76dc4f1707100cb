import type { ImportServiceClient, ListCollector } from '../../src/api/types.js';
import {
  NetworkError,
  NotFoundError,
  ServerError,
  SupplierNotOngoingError,
  UnexpectedResponseError,
} from '../../src/api/errors.js';
import type { V2StatusRecord } from '../../src/schema/index.js';

// An in-memory stand-in for the import service, for engine tests that need exact control of
// when a failure happens (after or before the change is applied). The e2e tests use the real
// sandbox over HTTP; this only lets the engine's reconciliation be tested deterministically.

/** `odd`: answered 200 with a body that is not the spec's; `unreached`: a connection refused, never answered. */
export type Fault = 'none' | 'drop' | 'ambiguous' | 'fail' | 'odd' | 'unreached';

/** A connection dropped after the request left: the client cannot tell whether it was applied (ambiguous). */
export function droppedConnection(endpoint: string): NetworkError {
  return new NetworkError(endpoint, 'sent', 'connection reset (fake service)');
}

interface FakeAccount {
  creates: number;
  polls: number;
  status: V2StatusRecord['status'];
  number: string;
  notes: Array<{ body: string; created_at?: string }>;
  transactions: string[];
  statements: string[];
  paymentInstructions: string[];
}

export class FakeService implements ImportServiceClient {
  readonly accounts = new Map<string, FakeAccount>();
  readonly calls: string[] = [];
  readonly #counts = new Map<string, number>();
  /** Decides the fault of each call by method name and call number. */
  fault: (method: string, n: number) => Fault = () => 'none';
  /** Status checks an account stays PENDING for before it settles. */
  pollsToSettle = 1;
  inFlight = 0;
  maxInFlight = 0;
  supplierOngoing = true;
  /** false: the platform's one active payment instruction per account (a second is refused with 400). */
  multiplePaymentInstructions = false;

  /** A status check (v1 or v2): the account settles after pollsToSettle of them. */
  #poll(account: FakeAccount, number: string): void {
    account.polls += 1;
    if (account.status === 'PENDING' && account.polls >= this.pollsToSettle)
      account.status = number.startsWith('ERR-') ? 'ERRORED' : 'PROCESSED';
  }

  async #run<T>(method: string, apply: () => T): Promise<T> {
    this.calls.push(method);
    const n = (this.#counts.get(method) ?? 0) + 1;
    this.#counts.set(method, n);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const fault = this.fault(method, n);
      if (fault === 'drop') throw droppedConnection(method);
      if (fault === 'fail') throw new ServerError(method, 500, 'fake failure', false);
      if (fault === 'odd') throw new UnexpectedResponseError(method, 200, "fake answer not the spec's", 'status');
      if (fault === 'unreached') throw new NetworkError(method, 'not_sent', 'connection refused (fake service)');
      const result = apply();
      if (fault === 'ambiguous') throw droppedConnection(method);
      return result;
    } finally {
      this.inFlight -= 1;
    }
  }

  #imported(number: string): FakeAccount {
    const account = this.accounts.get(number);
    if (account === undefined || account.status !== 'PROCESSED') throw new NotFoundError('fake', 'not imported');
    return account;
  }

  #ongoing(): void {
    if (!this.supplierOngoing)
      throw new SupplierNotOngoingError('fake', 'the supplier is paused', 'import_supplier_migration_not_ongoing', 400);
  }

  validateAccount = async () => this.#run('validate', () => ({ kind: 'valid' as const }));

  createAccount = async (payload: { external_account_number?: string }) =>
    this.#run('create', () => {
      this.#ongoing();
      const number = payload.external_account_number ?? '';
      const existing = this.accounts.get(number);
      if (existing?.status === 'PROCESSED')
        return { kind: 'already_imported' as const, platformAccountNumber: existing.number };
      if (existing) existing.creates += 1;
      else
        this.accounts.set(number, {
          creates: 1,
          polls: 0,
          status: 'PENDING',
          number: `P-${number}`,
          notes: [],
          transactions: [],
          statements: [],
          paymentInstructions: [],
        });
      return { kind: 'scheduled' as const };
    });

  getImportStatus = async (_supplier: string, number: string) =>
    this.#run('status', () => {
      const account = this.accounts.get(number);
      if (account === undefined) return null;
      this.#poll(account, number);
      return {
        status: account.status,
        platform_identifier: account.status === 'PROCESSED' ? `K-${number}` : null,
        created_at: 'x',
        modified_at: 'x',
        latest_error:
          account.status === 'ERRORED' ? { code: 'meter_failure', detail: 'failed', domain: 'import_process' } : null,
      };
    });

  getTransferStatus = async (_supplier: string, number: string) =>
    this.#run('transfer', () => {
      const account = this.accounts.get(number);
      if (account === undefined) return null;
      this.#poll(account, number);
      return {
        status:
          account.status === 'PROCESSED'
            ? ('COMPLETED' as const)
            : account.status === 'PENDING'
              ? ('IN_PROGRESS' as const)
              : ('UNKNOWN' as const),
        platform_account_number: account.status === 'PROCESSED' ? account.number : '',
      };
    });

  listAllImports = async <R>(_supplier: string, collect: () => ListCollector<R>) =>
    this.#run('list', () => collect().result());
  listPendingImports = async <R>(_supplier: string, collect: () => ListCollector<R>) =>
    this.#run('list', () => collect().result());
  listImportedAccounts = async <R>(_supplier: string, collect: () => ListCollector<R>) =>
    this.#run('list', () => {
      const collector = collect();
      for (const [number, a] of this.accounts)
        if (a.status === 'PROCESSED')
          collector.add({
            external_account_number: number,
            platform_account_number: a.number,
            account_created_at: 'x',
          });
      return collector.result();
    });

  createNotes = async (request: {
    external_account_number: string;
    notes: Array<{ body?: string; created_at?: string }>;
  }) =>
    this.#run('notes', () => {
      this.#ongoing();
      const account = this.#imported(request.external_account_number);
      const results = request.notes.map((note) => {
        const exists = account.notes.some(
          (n) => n.body === note.body && (note.created_at === undefined || n.created_at === note.created_at),
        );
        if (!exists)
          account.notes.push({ body: note.body ?? '', ...(note.created_at ? { created_at: note.created_at } : {}) });
        return {
          body: note.body ?? null,
          created_at: note.created_at ?? 'now',
          status: exists ? ('NOTE_ALREADY_EXISTS' as const) : ('NOTE_CREATION_SUCCESS' as const),
        };
      });
      return { kind: 'created' as const, results };
    });

  /** Transactions dedup by id only when check_previously_added is on, like the service. */
  createTransactions = async (
    request: { external_account_number: string; transactions: Array<{ transaction_id: string }> },
    flags?: { check_previously_added?: boolean },
  ) =>
    this.#run('transactions', () => {
      const account = this.#imported(request.external_account_number);
      const results = request.transactions.map((t) => {
        // An id starting BAD- is refused in its result (the platform's TRANSACTION_IMPORT_ERROR status in a 201).
        if (t.transaction_id.startsWith('BAD-'))
          return { status: 'TRANSACTION_IMPORT_ERROR', transaction_data: { ...t } };
        const exists = flags?.check_previously_added !== false && account.transactions.includes(t.transaction_id);
        if (!exists) account.transactions.push(t.transaction_id);
        return {
          status: exists ? 'TRANSACTION_ALREADY_EXISTS' : 'TRANSACTION_ADDED_TO_ACCOUNT',
          transaction_data: { ...t },
        };
      });
      return { kind: 'created' as const, results };
    });

  createHistoricalStatements = async (request: {
    external_account_number: string;
    statements: Array<{ statement_id: string }>;
  }) =>
    this.#run('statements', () => {
      const account = this.#imported(request.external_account_number);
      if (request.statements.some((s) => account.statements.includes(s.statement_id)))
        return { kind: 'already_exists' as const, detail: 'exists' };
      account.statements.push(...request.statements.map((s) => s.statement_id));
      return { kind: 'created' as const, statements: request.statements };
    });

  createPaymentInstruction = async (request: { external_account_number: string; reference: string }) =>
    this.#run('payment', () => {
      const account = this.#imported(request.external_account_number);
      if (!this.multiplePaymentInstructions && account.paymentInstructions.length > 0)
        return { kind: 'already_active' as const, detail: 'Account already has an active instruction' };
      if (request.reference.startsWith('FAIL-'))
        return { kind: 'refused' as const, detail: 'vendor says no', errors: [] };
      account.paymentInstructions.push(request.reference);
      return { kind: 'created' as const, platformAccountNumber: account.number, reference: request.reference };
    });

  close = async () => undefined;
}
