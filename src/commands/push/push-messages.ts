import { visibleValue } from '../../errors.js';
import type { IssueList } from '../../intake/index.js';
import { errnoOf } from '../../errors.js';
import type { Forgotten } from '../../ledger/index.js';

// The lines `migrate push` writes to stderr about its run, beside the summary (summary.ts) and the progress
// (progress.ts): each a pure function of what happened, so that the command only decides when to write them.

/** Rows outside any account: named with file and line, the first five, and what became of them. */
export function fileIssuesText(issues: Pick<IssueList, 'length' | 'first'>, outcome: string): string {
  const shown = issues
    .first(5)
    .map((issue) =>
      visibleValue(`  ${issue.file}:${issue.line}${issue.column ? ` (${issue.column})` : ''}: ${issue.message}`),
    );
  const more = issues.length > 5 ? `\n  ... and ${issues.length - 5} more` : '';
  return (
    `the export has ${issues.length} problem(s) outside any account; ${outcome}. Fix them (run \`migrate ` +
    `validate\` for the full list):\n${shown.join('\n')}${more}`
  );
}

/** --retry-invalid CODES: how many accounts the service refused with them are sent again. */
export function releasedText(codes: readonly string[], released: number): string {
  return (
    `--retry-invalid ${codes.join(',')}: ${released} account(s) the service refused with ` +
    `${codes.length === 1 ? 'this code are' : 'these codes are'} sent again`
  );
}

/** Accounts staged under a supplier code the service refused as unknown: removed, the export staged again. */
export function restagedText(forgotten: Forgotten): string {
  return (
    `import supplier ${forgotten.supplier}: the service refused it as unknown, so its ${forgotten.numbers.length} ` +
    'account(s) that never reached the service are staged again from the export as it reads now'
  );
}

/** --accounts: the numbers neither the export nor the ledger has. */
export function unknownAccountsText(unknown: readonly string[]): string {
  return (
    `--accounts: ${unknown.length} not in the export or the ledger (nothing done for them): ` +
    unknown.slice(0, 20).map(visibleValue).join(', ')
  );
}

/** --log-file could not be written on: the run went on without it. */
export function logFailedText(failure: Error): string {
  const why = errnoOf(failure) ?? failure.message;
  return `warning: --log-file: writing stopped (${why}); the run went on`;
}

/** The state directory's lock was lost during the run: another run may have started. */
export function lockLostText(stateDir: string, reason: string | undefined): string {
  return (
    `the lock of ${stateDir} was lost during the run (${reason ?? 'unknown reason'}); stopped. Check that no other ` +
    'run uses this state directory, then run again.'
  );
}
