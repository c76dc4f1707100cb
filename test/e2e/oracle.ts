import { loadMigrateConfig } from '../../src/config/index.js';
import type { GroupRecord, JoinSetup } from '../../src/mapping/join-groups.js';
import { joinGroup } from '../../src/mapping/join-groups.js';
import { csvKey, jsonKey, planFile, type FilePlan } from '../../src/mapping/record.js';
import type { ExportAccount } from '../../src/mapping/types.js';
import type { InspectedAccount } from '../../src/sandbox/inspected.js';
import { findExportFiles, readCsv, readJsonArray, readNdjson } from '../../src/sources/index.js';

// What the service must hold after a push, from the export read the simplest way there is: every
// file read whole into memory in one pass, its records grouped by external account number in a
// Map, each group mapped by the mapping code. Nothing of intake's order proof, sorting or joins is
// used, so a push that sent an account before all its rows were in (or dropped, duplicated or
// changed a record) differs from it.

export interface ExpectedAccount {
  payload: unknown;
  notes: unknown[];
  transactions: unknown[];
  statements: unknown[];
  paymentInstructions: unknown[];
}

export interface ExpectedExport {
  /** Every account of the accounts file, valid or not, as mapped from all its rows. */
  all: Map<string, ExpectedAccount>;
  /** Accounts with no problem: created once, with exactly this payload and these records. */
  valid: Map<string, ExpectedAccount>;
  /** Accounts held back by a problem of their data: never created. */
  invalid: Set<string>;
}

/** Reads and maps the export in memory (small and medium exports: every record is held at once). */
export async function exportInMemory(
  dir: string,
  env: NodeJS.ProcessEnv = {},
  today = new Date().toISOString().slice(0, 10),
): Promise<ExpectedExport> {
  const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env });
  const { files } = await findExportFiles(dir);
  const groups = new Map<string, GroupRecord[]>();
  const plans: FilePlan[] = [];
  for (const [fileIndex, file] of files.entries()) {
    const options = { file: file.file, encoding: config.mapping[file.kind].encoding };
    const add = (key: string | undefined, line: number, data: GroupRecord['data']): void => {
      if (key === undefined) return;
      const group = groups.get(key) ?? [];
      groups.set(key, group);
      group.push({ kind: file.kind, fileIndex, line, data });
    };
    if (file.format === 'csv') {
      let plan: FilePlan | undefined;
      for await (const row of readCsv(file.absolutePath, {
        ...options,
        delimiter: config.mapping[file.kind].delimiter,
      }))
        if (plan === undefined) plan = planFile(file.kind, file.file, row.cells, config);
        else add(csvKey(plan, row.cells), row.line, row.cells);
      plans.push(plan as FilePlan);
    } else {
      const plan = planFile(file.kind, file.file, [], config);
      const records =
        file.format === 'json' ? readJsonArray(file.absolutePath, options) : readNdjson(file.absolutePath, options);
      for await (const item of records)
        add(
          jsonKey(plan, item.object, () => undefined),
          item.line,
          item.object,
        );
      plans.push(plan);
    }
  }
  const setup: JoinSetup = {
    plans,
    fileNames: files.map((file) => file.file),
    context: {
      today,
      columnOf: Object.fromEntries(files.map((file, index) => [file.file, plans[index]?.columnOf ?? {}])),
      importSupplier: config.importSupplier,
      multiplePaymentInstructions: config.multiplePaymentInstructions,
      tenantFields: config.tenantFields,
      // The tenant's contract, when the export's mapping file names one: what breaks it is held back, judged on the
      // bodies in the dialect the mapping file names (a contract describes the kraken forms).
      contract: config.contract,
      dialect: config.dialect,
    },
  };
  const expected: ExpectedExport = { all: new Map(), valid: new Map(), invalid: new Set() };
  for (const [key, records] of groups) {
    // Records of accounts not in this export are not looked at (they go to accounts imported earlier).
    if (!records.some((record) => record.kind === 'accounts')) continue;
    const ordered = records.sort((a, b) => a.fileIndex - b.fileIndex || a.line - b.line);
    const entry = joinGroup({ externalAccountNumber: key, records: ordered }, setup);
    if (entry.kind !== 'account') continue;
    expected.all.set(key, expectedOf(entry.account));
    if (entry.account.issues.length > 0) expected.invalid.add(key);
    else expected.valid.set(key, expectedOf(entry.account));
  }
  return expected;
}

function expectedOf(account: ExportAccount): ExpectedAccount {
  const values = (items: Array<{ value: unknown }>): unknown[] => items.map((item) => item.value);
  return {
    payload: account.payload,
    notes: values(account.notes),
    transactions: values(account.transactions),
    statements: values(account.statements),
    paymentInstructions: values(account.paymentInstructions),
  };
}

/** What an account holds on the sandbox, in the forms of the export's mapped values (spec dialect). */
function heldOn(account: InspectedAccount): ExpectedAccount {
  return {
    payload: account.payload,
    notes: account.notes
      .filter((note) => !note.bySandbox)
      .map((note) => note.body)
      .sort(),
    transactions: account.transactions
      .map((transaction) => [transaction.transactionId, Number(transaction.amount)])
      .sort(),
    statements: account.historicalStatements.map((statement) => statement['statement_id']).sort(),
    paymentInstructions: account.paymentInstructions
      .map((instruction) => [instruction.vendor, instruction.reference, instruction.type])
      .sort(),
  };
}

function comparable(account: ExpectedAccount): ExpectedAccount {
  const field = (value: unknown, name: string): unknown => (value as Record<string, unknown>)[name];
  return {
    payload: JSON.parse(JSON.stringify(account.payload)),
    notes: account.notes.map((note) => field(note, 'body')).sort(),
    transactions: account.transactions.map((t) => [field(t, 'transaction_id'), Number(field(t, 'amount'))]).sort(),
    statements: account.statements.map((statement) => field(statement, 'statement_id')).sort(),
    paymentInstructions: account.paymentInstructions
      .map((p) => [field(p, 'vendor'), field(p, 'reference'), field(p, 'type')])
      .sort(),
  };
}

/**
 * Every valid account of the export created exactly once on the service, its payload exactly as mapped from the whole
 * export (customers, supply addresses and every other field) and each of its records once; no invalid account created.
 */
/** How what the service holds differs from the export, one line per account and part (none: exact). */
export function differences(service: InspectedAccount[], expected: ExpectedExport): string[] {
  const byNumber = new Map(service.map((account) => [account.externalAccountNumber, account]));
  const wrong: string[] = [];
  for (const [number, want] of expected.valid) {
    const held = byNumber.get(number);
    if (held === undefined) wrong.push(`${number}: not created`);
    else if (held.createRequestsAccepted !== 1) wrong.push(`${number}: created ${held.createRequestsAccepted} times`);
    else {
      const [got, exp] = [heldOn(held), comparable(want)];
      for (const part of Object.keys(exp) as Array<keyof ExpectedAccount>)
        if (JSON.stringify(sorted(got[part])) !== JSON.stringify(sorted(exp[part])))
          wrong.push(`${number} ${part}: ${JSON.stringify(got[part])} != ${JSON.stringify(exp[part])}`);
    }
  }
  for (const number of expected.invalid) if (byNumber.has(number)) wrong.push(`${number}: invalid, yet created`);
  for (const number of byNumber.keys())
    if (!expected.valid.has(number) && !expected.invalid.has(number)) wrong.push(`${number}: not in the export`);
  return wrong;
}

/**
 * Accounts created on the service whose payload is not exactly the one mapped from the whole export (customers, supply
 * addresses and every other field), or that the export does not have: for runs whose records are checked otherwise
 * (ERRORED accounts, refused records).
 */
export function payloadDifferences(
  service: Array<{ number: string; payload: unknown }>,
  expected: ExpectedExport,
): string[] {
  const wrong: string[] = [];
  for (const { number, payload } of service) {
    const want = expected.all.get(number);
    if (want === undefined) wrong.push(`${number}: not in the export`);
    else if (JSON.stringify(sorted(payload)) !== JSON.stringify(sorted(JSON.parse(JSON.stringify(want.payload)))))
      wrong.push(`${number} payload: ${JSON.stringify(payload)} != ${JSON.stringify(want.payload)}`);
  }
  return wrong;
}

/** JSON with object keys in order, so that two payloads compare whatever their key order. */
export function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, inner]) => [key, sorted(inner)]),
  );
}
