import { Code, validateHistoricalStatementsRequest, type ValidationIssue } from '../../schema/index.js';
import { asList, asObject, asString } from '../../schema/read.js';
import type { Reply } from '../http-io.js';
import { invalidRequest, resolvePostImport, withContract, type HandlerContext } from './common.js';

// Spec "Create historical statements". Duplicates by statement_id are refused, the whole request
// with them (docs/service.md "Historical statements"). The spec gives both 201 and 200 for success; the sandbox
// answers 201 like every other create (a client must accept both).

/** POST /v1/data-import/historical-statements/create/ -> 201 with the validated data echoed. */
export function createHistoricalStatements(context: HandlerContext): Reply {
  const spec = validateHistoricalStatementsRequest(context.body);
  const resolved = resolvePostImport(context, withContract(context, 'statements', context.body, spec));
  if ('reply' in resolved) return resolved.reply;
  const data = context.store.postImport(resolved.record);
  const statements = asList(asObject(context.body)?.['statements']).map((item) => ({ ...(asObject(item) ?? {}) }));
  const duplicates: ValidationIssue[] = [];
  statements.forEach((statement, index) => {
    const id = asString(statement['statement_id']) ?? '';
    if (data.statementIds?.has(id)) {
      duplicates.push({
        attr: `statements.${index}.statement_id`,
        code: Code.historicalStatementAlreadyExists,
        detail: `A historical statement with statement_id ${id} already exists on the account.`,
      });
    }
  });
  if (duplicates.length > 0)
    return invalidRequest(
      duplicates,
      'A historical statement with this statement_id already exists.',
      Code.historicalStatementAlreadyExists,
    );
  const stored = (data.statements ??= []);
  const ids = (data.statementIds ??= new Set());
  for (const statement of statements) {
    const id = asString(statement['statement_id']) ?? '';
    // Without retainPayloads (large benchmarks) only the id is kept.
    stored.push(context.retainPayloads ? statement : { statement_id: id });
    ids.add(id);
  }
  return {
    status: 201,
    body: {
      import_supplier: resolved.target.supplier,
      external_account_number: resolved.target.externalAccountNumber,
      statements,
    },
  };
}
