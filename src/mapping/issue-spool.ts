import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SourceIssue } from './types.js';

// Problems of an export in the order found, with memory that does not grow with their number: a
// date format wrong in every row of a million-row export is millions of errors. The first
// IN_MEMORY stay in memory (the common case writes no file); the rest go to a scratch file as
// JSON lines. The file is unlinked as soon as it is open, so even a killed run leaves nothing
// behind (it holds customers' account numbers); where the OS refuses (Windows), close() removes it.

const IN_MEMORY = 5_000;
const FLUSH_CHARS = 1 << 20;

/** A list of problems that may be longer than memory: a count, the first few, and one pass at a time. */
export interface IssueList extends AsyncIterable<SourceIssue> {
  readonly length: number;
  /** Problems per code. */
  readonly byCode: Readonly<Record<string, number>>;
  /** The first `count` problems (at most IN_MEMORY). */
  first(count: number): SourceIssue[];
}

export class IssueSpool implements IssueList {
  readonly byCode: Record<string, number> = {};
  readonly #memory: SourceIssue[] = [];
  readonly #scratchDir: string | undefined;
  #spill: { fd: number; dir: string | undefined; bytes: number } | undefined;
  #pending = '';
  #length = 0;

  constructor(scratchDir?: string) {
    this.#scratchDir = scratchDir;
  }

  get length(): number {
    return this.#length;
  }

  push(issue: SourceIssue): void {
    this.#length += 1;
    this.byCode[issue.code] = (this.byCode[issue.code] ?? 0) + 1;
    if (this.#spill === undefined && this.#memory.length < IN_MEMORY) {
      this.#memory.push(issue);
      return;
    }
    this.#spill ??= this.#openSpill();
    this.#pending += `${JSON.stringify(issue)}\n`;
    if (this.#pending.length >= FLUSH_CHARS) this.#flush();
  }

  first(count: number): SourceIssue[] {
    return this.#memory.slice(0, count);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<SourceIssue> {
    yield* this.#memory;
    if (this.#spill === undefined) return;
    this.#flush();
    const { fd, bytes } = this.#spill;
    const chunk = Buffer.alloc(1 << 20);
    let rest = '';
    for (let position = 0; position < bytes; ) {
      const read = readSync(fd, chunk, 0, chunk.length, position);
      position += read;
      const lines = (rest + chunk.toString('utf8', 0, read)).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) yield JSON.parse(line) as SourceIssue;
    }
  }

  close(): void {
    if (!this.#spill) return;
    closeSync(this.#spill.fd);
    if (this.#spill.dir !== undefined) rmSync(this.#spill.dir, { recursive: true, force: true });
    this.#spill = undefined;
  }

  #openSpill(): { fd: number; dir: string | undefined; bytes: number } {
    const dir = mkdtempSync(path.join(this.#scratchDir ?? os.tmpdir(), 'migrate-issues-'));
    const file = path.join(dir, 'issues.ndjson');
    const fd = openSync(file, 'w+', 0o600);
    try {
      rmSync(dir, { recursive: true });
      return { fd, dir: undefined, bytes: 0 };
    } catch {
      return { fd, dir, bytes: 0 };
    }
  }

  #flush(): void {
    if (!this.#spill || this.#pending === '') return;
    const bytes = Buffer.from(this.#pending, 'utf8');
    writeSync(this.#spill.fd, bytes, 0, bytes.length, this.#spill.bytes);
    this.#spill.bytes += bytes.length;
    this.#pending = '';
  }
}

/** Several lists read as one, in order. */
export function concatIssues(lists: IssueList[]): IssueList {
  return {
    get length() {
      return lists.reduce((sum, list) => sum + list.length, 0);
    },
    get byCode() {
      const byCode: Record<string, number> = {};
      for (const list of lists) for (const [code, count] of Object.entries(list.byCode)) byCode[code] = (byCode[code] ?? 0) + count;
      return byCode;
    },
    first: (count) => lists.flatMap((list) => list.first(count)).slice(0, count),
    async *[Symbol.asyncIterator]() {
      for (const list of lists) yield* list;
    },
  };
}
