import type { AccountPayload } from '../schema/index.js';
import { validateAccountPayload, withoutTenantFields } from '../schema/index.js';
import { duplicateCustomerWarnings } from './duplicate-customers.js';
import { ExportCode } from './issue-codes.js';
import { locateIssue } from './locate.js';
import { itemsOf, recordsByKind, type ItemSet } from './items.js';
import {
  originOf,
  recordIssue,
  REQUEST_BODIES,
  requestIssues,
  type JoinContext,
  type SourcedRecord,
} from './sourced-record.js';
import type { ExportAccount, OmittedIssue, Origin, OrphanItems, SourceIssue } from './types.js';

// The records of one external account number -> one ExportAccount (or OrphanItems). Pure: the
// staging store hands over the records in file order; every problem is located here.

/**
 * An issue at `attr` hides the schema's verdict on the same value (it was not coerced, so the schema would only repeat
 * it).
 */
function suppressedBy(mappingIssues: SourceIssue[]): (issue: SourceIssue) => boolean {
  const attrs = mappingIssues.map((issue) => issue.attr ?? '').filter((attr) => attr !== '');
  return (issue) => attrs.some((attr) => issue.attr === attr || (issue.attr ?? '').startsWith(`${attr}.`));
}

function collect(
  payload: Record<string, unknown>,
  list: 'customers' | 'supply_addresses',
  accountOrigin: Origin,
  rows: SourcedRecord[],
  origins: Record<string, Origin>,
  issues: SourceIssue[],
  number: string,
): void {
  const inline = Array.isArray(payload[list]) ? (payload[list] as unknown[]) : [];
  inline.forEach((_, index) => {
    origins[`${list}.${index}`] = { ...accountOrigin, column: list };
  });
  rows.forEach((staged, offset) => {
    const index = inline.length + offset;
    origins[`${list}.${index}`] = originOf(staged);
    for (const issue of staged.record.issues) issues.push(recordIssue(staged, number, issue, `${list}.${index}`));
  });
  if (inline.length + rows.length > 0) payload[list] = [...inline, ...rows.map((staged) => staged.record.fields)];
}

/**
 * Records whose supplier (their cell, else the configured one) is not `supplier` get an issue: records join their
 * account by external_account_number alone, and the service finds an account by supplier and number, so such a record
 * would go to another supplier's account of that number, or to none (a payment instruction is sent with its own
 * record's supplier). `whose`: where `supplier` comes from, for the message.
 */
function markOtherSuppliers(records: SourcedRecord[], supplier: string, whose: string, context: JoinContext): void {
  for (const staged of records) {
    const own = staged.record.importSupplier;
    if (own === undefined || own === supplier || staged.record.kind === 'accounts') continue;
    staged.record.issues.push({
      attr: '',
      column: context.columnOf[staged.file]?.['import_supplier'] ?? 'import_supplier',
      code: ExportCode.importSupplierDiffers,
      message:
        `import_supplier ${own} (the record's, else the configured one) is not ${supplier}, ${whose}: the service ` +
        `would look for the account under ${own}. Give every record of an account its account's supplier, or none.`,
    });
  }
}

export function joinAccount(number: string, records: SourcedRecord[], context: JoinContext): ExportAccount {
  const byKind = recordsByKind(records);
  const [main, ...duplicates] = byKind.accounts ?? [];
  if (!main) throw new Error(`joinAccount(${number}) without an accounts record`);
  const origin: Origin = originOf(main);
  if (main.record.importSupplier !== undefined)
    markOtherSuppliers(
      records,
      main.record.importSupplier,
      `its account's supplier (${main.file} line ${main.record.line})`,
      context,
    );
  const origins: Record<string, Origin> = { '': origin };
  const payload = main.record.fields;
  const mappingIssues = main.record.issues.map((issue) => recordIssue(main, number, issue));
  for (const duplicate of duplicates) {
    mappingIssues.push({
      file: duplicate.file,
      line: duplicate.record.line,
      column: context.columnOf[duplicate.file]?.['external_account_number'] ?? 'external_account_number',
      externalAccountNumber: number,
      code: ExportCode.duplicateExternalAccountNumber,
      message:
        `external_account_number ${number} is already on line ${main.record.line}; an account must appear ` +
        `once in ${main.file}.`,
    });
  }
  collect(payload, 'customers', origin, byKind.customers ?? [], origins, mappingIssues, number);
  collect(payload, 'supply_addresses', origin, byKind.supply_addresses ?? [], origins, mappingIssues, number);
  const customers = Array.isArray(payload['customers']) ? (payload['customers'] as unknown[]) : [];
  const warnings = duplicateCustomerWarnings(number, customers, (index) => origins[`customers.${index}`]);
  if (payload['import_supplier'] === undefined) {
    mappingIssues.push({
      ...origin,
      attr: 'import_supplier',
      externalAccountNumber: number,
      code: ExportCode.missingImportSupplier,
      message:
        'No import supplier: give --supplier, set MIGRATE_SUPPLIER or import_supplier in migrate.config.json, or ' +
        'fill the import_supplier column.',
    });
  }
  const located = { externalAccountNumber: number, origins, columnOf: context.columnOf };
  const hidden = suppressedBy(mappingIssues);
  const spec = validateAccountPayload(withoutTenantFields('account', payload, context.tenantFields), {
    today: context.today,
  });
  const schemaIssues = requestIssues(context, REQUEST_BODIES.account, payload, spec)
    .map((issue) => locateIssue(located, issue))
    .filter((issue) => !hidden(issue));
  const items = itemsOf(number, main.record.importSupplier ?? context.importSupplier, byKind, context);
  const itemIssues: SourceIssue[] = [];
  for (const list of [items.notes, items.transactions, items.statements, items.paymentInstructions] as Array<
    Array<{ issues: SourceIssue[] }>
  >) {
    for (const item of list) for (const issue of item.issues) itemIssues.push(issue);
  }
  return {
    externalAccountNumber: number,
    importSupplier: main.record.importSupplier ?? '',
    payload: payload as AccountPayload,
    origin,
    origins,
    issues:
      mappingIssues.length + schemaIssues.length + itemIssues.length === 0
        ? []
        : [...mappingIssues, ...schemaIssues, ...itemIssues],
    columnOf: columnOfFiles(context.columnOf, records),
    ...omissionsOf(records, number),
    ...(warnings.length === 0 ? {} : { warnings }),
    ...items,
  };
}

/** The values the records dropped under `on_invalid: omit`, located: `{ omitted }`, or nothing when none was. */
function omissionsOf(records: SourcedRecord[], number: string): { omitted?: OmittedIssue[] } {
  if (!records.some((staged) => staged.record.omitted.length > 0)) return {};
  return {
    omitted: records.flatMap((staged) =>
      staged.record.omitted.map((dropped) => ({
        ...recordIssue(staged, number, dropped),
        value: dropped.value,
      })),
    ),
  };
}

/**
 * The files that have renames, per columnOf table: most exports have none, and then no account needs a table of its
 * own.
 */
const renamedFiles = new WeakMap<Record<string, Record<string, string>>, Array<[string, Record<string, string>]>>();

function columnOfFiles(
  columnOf: Record<string, Record<string, string>>,
  records: SourcedRecord[],
): Record<string, Record<string, string>> {
  let renamed = renamedFiles.get(columnOf);
  if (!renamed) {
    renamed = Object.entries(columnOf).filter(([, renames]) => Object.keys(renames).length > 0);
    renamedFiles.set(columnOf, renamed);
  }
  if (renamed.length === 0) return {};
  return Object.fromEntries(renamed.filter(([file]) => records.some((staged) => staged.file === file)));
}

export function joinOrphan(number: string, records: SourcedRecord[], context: JoinContext): OrphanItems {
  const first = records.find((staged) => staged.record.importSupplier !== undefined);
  const supplier = first?.record.importSupplier ?? context.importSupplier;
  if (first?.record.importSupplier !== undefined)
    markOtherSuppliers(
      records,
      first.record.importSupplier,
      `the supplier of this account's first record here (${first.file} line ${first.record.line})`,
      context,
    );
  const items: ItemSet = itemsOf(number, supplier, recordsByKind(records), context);
  return { externalAccountNumber: number, importSupplier: supplier ?? '', ...omissionsOf(records, number), ...items };
}
