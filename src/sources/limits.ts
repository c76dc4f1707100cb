// Bounds on what one record of an export may hold (docs/limits.md). A record beyond them is
// refused with its file and line before it can exhaust memory: the CSV parsing thread has a
// 64 MB heap, and a record must fit in one request to the service anyway.

/** The most text one record may hold: a CSV row (in UTF-8 bytes), a JSON or NDJSON record (in characters). */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/** The limit as the messages show it. */
export const MAX_RECORD_TEXT = '4 MiB';
