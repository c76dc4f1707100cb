import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/api/errors.js';
import {
  AlreadyImportedError,
  AuthenticationError,
  NetworkError,
  NotFoundError,
  NotTheServiceError,
  RateLimitedError,
  RequestRejectedError,
  RetryAfterTooLongError,
  ServerError,
  SupplierNotOngoingError,
  SupplierUnknownError,
  TimeoutError,
  UnexpectedResponseError,
  ValidationFailedError,
} from '../../src/api/errors.js';
import { errorFromResponse, failureKindOf, issuesFromBody, type MapContext } from '../../src/api/map-response.js';
import { ExitCode, MigrateError } from '../../src/errors.js';

const read: MapContext = {
  endpoint: 'getImportStatus',
  write: false,
  serverErrorMeansNotApplied: false,
  wallNow: Date.parse('2026-11-22T08:00:00Z'),
  maxRetryAfterMs: 120_000,
};
const write: MapContext = { ...read, endpoint: 'createAccount', write: true };

const validationBody = {
  detail: 'Could not validate account data.',
  code: 'account_failed_validation',
  errors: [{ detail: 'abcde is not a valid phone number', code: 'invalid_phone_number', attr: 'customers.0.landline' }],
};

describe('errorFromResponse: one function maps an answer to its class', () => {
  // [status, body, headers, context, class, code, retryable, ambiguous, fatal]
  type Row = [
    number,
    unknown,
    Record<string, string>,
    MapContext,
    new (...args: never[]) => ApiError,
    string,
    boolean,
    boolean,
    boolean,
  ];
  const table: Row[] = [
    [400, validationBody, {}, write, ValidationFailedError, 'validation_failed', false, false, false],
    [
      400,
      {
        non_field_errors: { detail: 'already', code: 'account_import_process_already_imported' },
        account_id: 'A-12345678',
      },
      {},
      write,
      AlreadyImportedError,
      'already_imported',
      false,
      false,
      false,
    ],
    [
      400,
      { detail: 'paused', code: 'import_supplier_migration_not_ongoing' },
      {},
      write,
      SupplierNotOngoingError,
      'supplier_not_ongoing',
      false,
      false,
      true,
    ],
    [
      400,
      { detail: 'no such supplier', code: 'invalid_import_supplier' },
      {},
      read,
      SupplierUnknownError,
      'supplier_unknown',
      false,
      false,
      true,
    ],
    [
      400,
      {
        detail: 'x',
        code: 'account_failed_validation',
        errors: [{ attr: 'import_supplier', code: 'import_supplier_migration_not_ongoing', detail: 'paused' }],
      },
      {},
      write,
      SupplierNotOngoingError,
      'supplier_not_ongoing',
      false,
      false,
      true,
    ],
    // an unknown supplier named by one record is that record's problem
    [
      400,
      {
        detail: 'x',
        code: 'invalid',
        errors: [{ attr: 'import_supplier', code: 'invalid_import_supplier', detail: 'unknown' }],
      },
      {},
      write,
      ValidationFailedError,
      'validation_failed',
      false,
      false,
      false,
    ],
    [400, undefined, {}, write, RequestRejectedError, 'request_rejected', false, false, false],
    [401, { detail: 'Invalid token.' }, {}, read, AuthenticationError, 'authentication_failed', false, false, true],
    [403, { detail: 'Forbidden' }, {}, read, AuthenticationError, 'authentication_failed', false, false, true],
    [404, { detail: 'not found', code: 'not_found' }, {}, read, NotFoundError, 'not_found', false, false, false],
    [404, undefined, {}, write, NotFoundError, 'not_found', false, false, false],
    [413, { detail: 'too large' }, {}, write, RequestRejectedError, 'request_rejected', false, false, false],
    [429, { detail: 'slow down' }, { 'retry-after': '2' }, read, RateLimitedError, 'rate_limited', true, false, false],
    [500, { detail: 'boom' }, {}, read, ServerError, 'server_error', true, false, false],
    // a 5xx after a write may have applied part of it
    [500, { detail: 'boom' }, {}, write, ServerError, 'server_error', true, true, false],
    // the payment-instruction rule: its 500 means nothing was applied
    [
      500,
      undefined,
      {},
      { ...write, serverErrorMeansNotApplied: true },
      ServerError,
      'server_error',
      true,
      false,
      false,
    ],
    [502, '<html>bad gateway</html>', {}, read, ServerError, 'server_error', true, false, false],
    [302, undefined, {}, read, UnexpectedResponseError, 'unexpected_answer', false, false, false],
  ];
  it.each(table)('HTTP %i %j -> %o', (status, body, headers, context, cls, code, retryable, ambiguous, fatal) => {
    const error = errorFromResponse({ status, headers, body }, context);
    expect(error).toBeInstanceOf(cls);
    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.endpoint).toBe(context.endpoint);
    expect(error.retryable).toBe(retryable);
    expect(error.ambiguous).toBe(ambiguous);
    expect(error.fatal).toBe(fatal);
    expect(error.message).toContain(context.endpoint);
  });

  it('a 404 where the service always has the endpoint (create, validate, the token) is not the service: fatal', () => {
    const body = { detail: 'Not found.', code: 'not_found' };
    const url = 'https://host/api/v2/data-import/accounts/';
    const wrong = errorFromResponse({ status: 404, headers: {}, body }, { ...write, alwaysThere: url });
    expect(wrong).toBeInstanceOf(NotTheServiceError);
    expect(wrong.fatal).toBe(true);
    expect(wrong.code).toBe('not_the_service');
    expect(wrong.message).toContain(`createAccount: ${url} answered HTTP 404 (Not found.)`);
    // Elsewhere a 404 is the spec's own answer: the account or process is not there.
    expect(errorFromResponse({ status: 404, headers: {}, body }, read)).toBeInstanceOf(NotFoundError);
  });

  it('a Retry-After beyond the ceiling is fatal on a 503 too, naming the header', () => {
    const error = errorFromResponse({ status: 503, headers: { 'retry-after': '86400' }, body: undefined }, read);
    expect(error).toBeInstanceOf(RetryAfterTooLongError);
    expect(error).toMatchObject({ status: 503, fatal: true, retryAfterMs: 86_400_000 });
    expect(error.message).toContain('(HTTP 503, Retry-After: 86400)');
    // After a write it may have been applied, as after any 5xx: a server error in doubt, reconciled, never a stop that
    // would count it unsent.
    const written = errorFromResponse({ status: 503, headers: { 'retry-after': '86400' }, body: undefined }, write);
    expect(written).toMatchObject({ code: 'server_error', ambiguous: true });
    // Within the ceiling a 503 is a server error, resent by the retry policy.
    const within = errorFromResponse({ status: 503, headers: { 'retry-after': '5' }, body: undefined }, read);
    expect(within).toBeInstanceOf(ServerError);
  });

  it("reads an HTTP-date Retry-After against the answer's Date, else the wall clock", () => {
    const at = (ms: number): string => new Date(read.wallNow + ms).toUTCString();
    const dated = errorFromResponse(
      { status: 429, headers: { 'retry-after': at(3_630_000), date: at(3_600_000) }, body: undefined },
      read,
    ) as RateLimitedError;
    expect(dated.retryAfterMs).toBe(30_000);
    const undated = errorFromResponse({ status: 429, headers: { 'retry-after': at(30_000) }, body: undefined }, read);
    expect((undated as RateLimitedError).retryAfterMs).toBe(30_000);
  });

  it('carries what each class promises', () => {
    const invalid = errorFromResponse(
      { status: 400, headers: {}, body: validationBody },
      write,
    ) as ValidationFailedError;
    expect(invalid.issues).toEqual(validationBody.errors);
    expect(invalid.serviceCode).toBe('account_failed_validation');
    const already = errorFromResponse(
      {
        status: 400,
        headers: {},
        body: {
          non_field_errors: { detail: 'x', code: 'account_import_process_already_imported' },
          account_id: 'A-0000ABCD',
        },
      },
      write,
    ) as AlreadyImportedError;
    expect(already.platformAccountNumber).toBe('A-0000ABCD');
    const limited = errorFromResponse(
      { status: 429, headers: { 'retry-after': '3' }, body: undefined },
      read,
    ) as RateLimitedError;
    expect(limited.retryAfterMs).toBe(3000);
    const noHint = errorFromResponse(
      { status: 429, headers: { 'retry-after': '0' }, body: undefined },
      read,
    ) as RateLimitedError;
    expect(noHint.retryAfterMs).toBeUndefined();
  });

  it('every ApiError is a MigrateError that exits 3 if it reaches the CLI', () => {
    const error = errorFromResponse({ status: 401, headers: {}, body: undefined }, read);
    expect(error).toBeInstanceOf(MigrateError);
    expect(error.exitCode).toBe(ExitCode.fatal);
  });
});

describe('failureKindOf: the retry policy view', () => {
  const table: Array<[ApiError, string]> = [
    [new NetworkError('x', 'not_sent', 'ECONNREFUSED'), 'not_sent'],
    [new NetworkError('x', 'sent', 'UND_ERR_SOCKET'), 'no_answer'],
    [new TimeoutError('x', 'sent', 'UND_ERR_HEADERS_TIMEOUT'), 'no_answer'],
    [new TimeoutError('x', 'not_sent', 'UND_ERR_CONNECT_TIMEOUT'), 'not_sent'],
    [new RateLimitedError('x', 1000), 'rate_limited'],
    [new ServerError('x', 503, '', false), 'server_error'],
    [new AuthenticationError('x', 'bad', { status: 401 }), 'unauthorized'],
    [new AuthenticationError('x', 'bad key', { status: 200 }), 'final'],
    [new AuthenticationError('x', 'forbidden', { status: 403 }), 'final'],
    [new NotFoundError('x', 'gone'), 'final'],
    [new ValidationFailedError('x', [], 'bad'), 'final'],
    [new UnexpectedResponseError('x', 200, 'bad'), 'final'],
  ];
  it.each(table)('%o -> %s', (error, kind) => {
    expect(failureKindOf(error)).toBe(kind);
  });

  it('a network failure after sending is ambiguous, before sending it is not', () => {
    expect(new NetworkError('x', 'sent', 'reset').ambiguous).toBe(true);
    expect(new NetworkError('x', 'not_sent', 'refused').ambiguous).toBe(false);
  });
});

describe('issuesFromBody: every 400 shape read into issue items', () => {
  const table: Array<[string, unknown, Array<{ attr: string; code: string; detail: string }>]> = [
    ['standardized', validationBody, validationBody.errors],
    [
      'legacy nested map',
      { customers: { '0': { landline: ['abcde is not a valid phone number'] } } },
      [{ attr: 'customers.0.landline', code: 'invalid', detail: 'abcde is not a valid phone number' }],
    ],
    [
      'legacy list of messages',
      { transactions: { '0': { reason: ['Not a valid string.', 'Required.'] } } },
      [
        { attr: 'transactions.0.reason', code: 'invalid', detail: 'Not a valid string.' },
        { attr: 'transactions.0.reason', code: 'invalid', detail: 'Required.' },
      ],
    ],
    [
      'non_field_errors',
      { non_field_errors: ['Either account_number or external_account_number must be provided.'] },
      [{ attr: '', code: 'invalid', detail: 'Either account_number or external_account_number must be provided.' }],
    ],
    [
      'domain error',
      {
        code: 'import_process_failed_validation',
        detail: 'Import process validation failed',
        domain: 'import_process',
      },
      [{ attr: '', code: 'import_process_failed_validation', detail: 'Import process validation failed' }],
    ],
    ['detail only', { detail: 'Bad request.' }, [{ attr: '', code: 'invalid', detail: 'Bad request.' }]],
    ['not an object', 'oops', []],
    ['nothing', undefined, []],
  ];
  it.each(table)('%s', (_name, body, issues) => {
    expect(issuesFromBody(body)).toEqual(issues);
  });
});
