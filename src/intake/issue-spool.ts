import { readSync, writeSync } from 'node:fs';
import { openScratchFile, type ScratchFile } from './scratch-file.js';
import type { SourceIssue } from '../mapping/types.js';

// Problems of an export in the order found, with memory that does not grow with their number: a
// date format wrong in every row of a million-row export is millions of errors. The first
// IN_MEMORY stay in memory (the common case writes no file); the rest go to a scratch file as
// JSON lines, in a scratch file that nothing outlives (scratch-file.ts: it holds customers'
// account numbers).

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
  readonly #byLine: boolean;
  #spill: { file: ScratchFile; bytes: number } | undefined;
  #pending = '';
  #length = 0;

  /**
   * `byLine`: the problems of one file, handed out in line order while they fit in memory (a
   * file the join reads sorted finds some in account order); past IN_MEMORY, in the order found.
   */
  constructor(scratchDir?: string, options: { byLine?: boolean } = {}) {
    this.#scratchDir = scratchDir;
    this.#byLine = options.byLine === true;
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
    this.#spill ??= { file: openScratchFile(this.#scratchDir, 'issues.ndjson'), bytes: 0 };
    this.#pending += `${JSON.stringify(issue)}\n`;
    if (this.#pending.length >= FLUSH_CHARS) this.#flush();
  }

  first(count: number): SourceIssue[] {
    return this.#inMemory().slice(0, count);
  }

  /** The problems held in memory, in the order they are handed out. */
  #inMemory(): SourceIssue[] {
    // Array.prototype.sort is stable: problems of one line keep their order.
    return this.#byLine && this.#spill === undefined ? [...this.#memory].sort((a, b) => a.line - b.line) : this.#memory;
  }

  // Async only so that consumers can `for await` it beside the other streams: the spill file is read synchronously.
  // eslint-disable-next-line @typescript-eslint/require-await
  async *[Symbol.asyncIterator](): AsyncGenerator<SourceIssue> {
    yield* this.#inMemory();
    if (this.#spill === undefined) return;
    this.#flush();
    const {
      file: { fd },
      bytes,
    } = this.#spill;
    const chunk = Buffer.alloc(1 << 20);
    let rest = '';
    for (let position = 0; position < bytes;) {
      const read = readSync(fd, chunk, 0, chunk.length, position);
      position += read;
      const lines = (rest + chunk.toString('utf8', 0, read)).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) yield JSON.parse(line) as SourceIssue;
    }
  }

  close(): void {
    this.#spill?.file.close();
    this.#spill = undefined;
  }

  #flush(): void {
    if (!this.#spill || this.#pending === '') return;
    const bytes = Buffer.from(this.#pending, 'utf8');
    writeSync(this.#spill.file.fd, bytes, 0, bytes.length, this.#spill.bytes);
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
      for (const list of lists)
        for (const [code, count] of Object.entries(list.byCode)) byCode[code] = (byCode[code] ?? 0) + count;
      return byCode;
    },
    first: (count) => lists.flatMap((list) => list.first(count)).slice(0, count),
    async *[Symbol.asyncIterator]() {
      for (const list of lists) yield* list;
    },
  };
}
