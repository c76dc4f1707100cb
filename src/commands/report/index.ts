import { resolve } from 'node:path';
import { runOriginOfCommand } from '../common/run-config.js';
import { runOriginJson, type RunOrigin } from '../common/run-origin.js';
import { isLedgerDamage, storageError } from '../../ledger/index.js';
import type { Command } from 'commander';
import { RUN_DEFAULTS } from '../../defaults.js';
import { errnoOf, ExitCode, InterruptedError, UsageError, visibleJson } from '../../errors.js';
import { untilStopped, type StopRules } from '../../stop-signals.js';
import { openLedgerSource } from '../common/ledger-source.js';
import { ledgerWords } from '../common/shell-word.js';
import { onLedger } from '../common/ledger-snapshot.js';
import { addOptions, LEDGER_OPTION, STATE_OPTION } from '../common/option-table.js';
import { OutputClosed, stdoutOutput } from '../../output/output.js';
import { refuseUnsafeOutDir } from './out-dir.js';
import { HTML_REPORT_FILE, writeHtmlReport } from './html-report.js';
import { REPORT_FILES, writeReport, type ReportSummary } from './write-report.js';

export interface ReportCommandOptions {
  state: string;
  out: string;
  supplier?: string | undefined;
  json?: boolean | undefined;
  html?: boolean | undefined;
  ledger?: string | undefined;
}

export function registerReportCommand(program: Command, setExitCode: (code: number) => void): void {
  const report = program
    .command('report')
    .description(
      'Write the ledger as files keyed by external account number: accounts.csv (every account), fix-data.csv ' +
        '(what to fix in the export), ' +
        'retry.csv (what the next run retries), unknown-outcome.csv (records to check by hand), records.csv ' +
        '(every record and how it was settled), the control totals from the legacy files to the platform ' +
        '(reconciliation.csv, control-totals.csv, unused-rows.csv) and summary.json. Reads only the ledger.',
    );
  addOptions(report, [STATE_OPTION, LEDGER_OPTION])
    .option(
      '--out <dir>',
      'directory to write the report files into (created 0700; files 0600)',
      RUN_DEFAULTS.reportDir,
    )
    .option('--supplier <code>', "only this import supplier's accounts (default: all)")
    .option('--json', 'print summary.json on stdout instead of the file list')
    .option('--html', 'also write report.html: summary, charts and what needs action, in one self-contained page')
    .action(async (options: ReportCommandOptions) => {
      setExitCode(await untilStopped(STOPPED, () => reportCommand(options, runOriginOfCommand(report))));
    });
}

/** Stopped by SIGINT, SIGTERM or SIGHUP: the ledger is only read, exit 130 within seconds. */
const STOPPED: StopRules = {
  interrupted: () =>
    new InterruptedError(
      'by a stop signal',
      'the ledger is unchanged, the files in --out may be incomplete: run it again',
    ),
  atOnce: true,
};

/** `migrate report`: returns the exit code. */
export function reportCommand(options: ReportCommandOptions, origin?: RunOrigin): Promise<number> {
  return onLedger(options.ledger, ({ stateDir, label }) =>
    reportOn({ ...options, origin }, stateDir ?? resolve(options.state), label),
  );
}

/** `label`: how the report names a ledger that is not the state directory (a PostgreSQL URL, redacted). */
async function reportOn(
  options: ReportCommandOptions & { origin: RunOrigin | undefined },
  stateDir: string,
  label: string | undefined,
): Promise<number> {
  const source = openLedgerSource(stateDir);
  const out = stdoutOutput();
  try {
    const outDir = resolve(options.out);
    refuseUnsafeOutDir({
      given: options.out,
      outDir,
      exportDirs: source.read.pushExportDirs(),
      files: [...Object.values(REPORT_FILES), ...(options.html ? [HTML_REPORT_FILE] : [])],
    });
    const write = async (): Promise<ReportSummary> => {
      const written = await writeReport(source, { ledgerLabel: label ?? stateDir, outDir, supplier: options.supplier });
      if (options.html) {
        // The page's commands name this ledger and the last push's export directory, as the terminal's hints do.
        const known = {
          exportDir: source.read.pushExportDirs().at(-1),
          ledgerWords: ledgerWords({ url: label, stateDir }),
        };
        const path = await writeHtmlReport(source, written, { outDir, supplier: options.supplier, known });
        written.files[HTML_REPORT_FILE] = { path, rows: 1 };
      }
      return written;
    };
    // One snapshot: every file counts the same accounts, even while a push writes the ledger.
    const summary = await source.snapshot(write).catch((error: unknown) => {
      const damaged = isLedgerDamage(error) ? storageError(error, stateDir) : undefined;
      if (damaged) throw damaged;
      const code = errnoOf(error);
      // A file-system refusal (not a directory, no permission, disk full) is the operator's to fix: say where.
      if (typeof code === 'string' && /^E[A-Z]+$/.test(code))
        throw new UsageError(
          `--out ${options.out}: cannot write the report there (${code}); give a writable directory`,
          'report_unwritable',
          error,
        );
      throw error;
    });
    // On stdout, summary.json with the run configuration the report read its ledger by (the file is the ledger's).
    const said = runOriginJson(options.origin, undefined);
    const json = (): string => `${visibleJson(JSON.stringify({ ...said, ...summary }, null, 2))}\n`;
    await out.write(options.json ? json() : renderReport(summary));
    return ExitCode.ok;
  } catch (error) {
    // The files are written; only the listing's reader went away.
    if (error instanceof OutputClosed) return ExitCode.ok;
    throw error;
  } finally {
    out.dispose();
    source.close();
  }
}

const HINTS: Record<string, string> = {
  [REPORT_FILES.accounts]: 'every account: state, platform account number, last error',
  [REPORT_FILES.fixData]: 'data errors: fix these rows in the export, then push again',
  [REPORT_FILES.retry]: 'transient failures: the next push retries them by itself',
  [REPORT_FILES.unknown]: 'sent without an answer and never resent: check them on the platform',
  [REPORT_FILES.records]:
    'every post-import record: state and how it was settled (created, already_exists, reconciled)',
  [REPORT_FILES.reconciliation]: 'each legacy file: rows read, rows that reached a record, rows that reached none',
  [REPORT_FILES.controlTotals]: 'each record kind: records and sums shaped, valid, sent and accepted',
  [REPORT_FILES.unusedRows]: 'every legacy row that reached no record: source, file, line',
  [REPORT_FILES.summary]: 'counts per state, top error codes, recent runs, control totals',
  [HTML_REPORT_FILE]: 'one page for the project board: % complete, pace and finish, progress over time, errors',
};

function renderReport(summary: ReportSummary): string {
  const lines = [
    `report of ${summary.state_dir}${summary.import_supplier ? ` (import supplier ${summary.import_supplier})` : ''}:`,
  ];
  // One column for every path, as wide as the longest: the counts line up wherever the report is written.
  const width = Math.max(...Object.values(summary.files).map((file) => file.path.length));
  for (const [name, file] of Object.entries(summary.files)) {
    const rows = name.endsWith('.csv') ? `${String(file.rows).padStart(8)} rows  ` : ' '.repeat(15);
    lines.push(`  ${file.path.padEnd(width)} ${rows}${HINTS[name] ?? ''}`);
  }
  return `${lines.join('\n')}\n`;
}
