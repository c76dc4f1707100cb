import { readingEvents, type EventSink } from '../../engine/index.js';
import { InterruptedError, UsageError } from '../../errors.js';
import { openExportInOrder, type ExportInOrder } from '../../intake/export-in-order.js';
import type { ExportReader } from '../../intake/index.js';
import { ExportCode } from '../../mapping/issue-codes.js';
import type { Dialect } from '../../schema/index.js';
import { scratchSpaceError } from '../common/scratch-space.js';
import { fileIssuesText } from './push-messages.js';
import type { PushConfig } from './resolve.js';
import type { StopPoint } from './stop-points.js';

// The export a push sends, opened before its run is started: a shape.sql error, a file that cannot be read or an
// undocumented column is exit 2 with no run recorded (README "Exit codes": exit 2 writes nothing).

/** Where the export is opened: the run's state directory (its scratch files), the dialect it is sent in, the sinks. */
export interface ExportPlace {
  stateDir: string;
  dialect: Dialect;
  signal: AbortSignal;
  sink: EventSink;
  stopAt: (point: StopPoint) => void;
}

/** The export, every file proven in order or sorted first; refused before anything is sent if it cannot go. */
export async function openExportForRun(config: PushConfig, at: ExportPlace): Promise<ExportInOrder> {
  const { signal } = at;
  // Payloads are checked for the dialect they will be sent in, as the client checks them before sending.
  const reader = await openExportInOrder(
    config.dir,
    { ...config.mapping, dialect: at.dialect },
    {
      scratchDir: at.stateDir,
      signal,
      found: config.exportFiles,
      allowNoAccounts: config.allowNoAccounts,
      ...readingEvents(at.sink),
    },
  ).catch((error: unknown) => {
    if (signal.aborted) throw new InterruptedError('before anything was sent');
    throw scratchSpaceError(error, at.stateDir, config.exportFiles.files) ?? error;
  });
  try {
    at.stopAt('export-opened');
    // A signal while the export was opened (a streamed export's open does not watch it): nothing was sent yet.
    if (signal.aborted) throw new InterruptedError('before anything was sent');
    refuseExport(reader);
  } catch (error) {
    await reader.close();
    throw error;
  }
  return reader;
}

/**
 * Undocumented columns would drop data silently: push refuses them before anything is sent. Rows outside any account
 * (no or an unusable account number, a repeated header) are named at the end and the accounts go on, whether the read
 * found them before the first account (a file sorted first, a JSON export read whole) or while accounts were sent.
 */
export function refuseExport(reader: ExportReader): void {
  if ((reader.fileIssues.byCode[ExportCode.unknownColumn] ?? 0) === 0) return;
  throw new UsageError(fileIssuesText(reader.fileIssues, 'nothing was sent'), 'export_file_issues');
}
