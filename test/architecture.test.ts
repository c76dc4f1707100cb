import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The house's one-way imports (docs/architecture.md): folders in this order, each importing only folders below it
// (the program's shell in `cli/` registers the commands of `commands/`; no command imports `cli/`), and no import
// cycle between files. Within `commands/`, a command's folder imports its own files and `commands/common/`, never
// another command's. `src/errors.ts` and `src/defaults.ts` are the shared leaves every folder may use. Read from the
// source text, so it holds for every file, including those no test imports.

const FOLDER_ORDER: Array<string | string[]> = [
  'cli',
  'commands',
  'output',
  'config',
  'engine',
  'intake',
  'mapping',
  'shape',
  'sources',
  'ledger',
  'api',
  'sandbox',
  'schema',
];
/** Sibling folders that must not import each other although one is listed above the other. */
const SEPARATE: Array<[string, string]> = [
  ['sandbox', 'api'],
  ['sandbox', 'ledger'],
  ['sandbox', 'sources'],
  ['sandbox', 'mapping'],
  ['api', 'sandbox'],
];

const floorOf = (folder: string): number => FOLDER_ORDER.findIndex((floor) => [floor].flat().includes(folder));

const SRC = path.join(import.meta.dirname, '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const IMPORT =
  /(?:^|\s)(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((match) =>
    path.resolve(path.dirname(file), (match[1] ?? match[2] ?? '').replace(/\.js$/, '.ts')),
  );
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file).filter((target) => target.startsWith(SRC))]));
const folderOf = (file: string): string => path.relative(SRC, file).split(path.sep)[0] ?? '';
const name = (file: string): string => path.relative(SRC, file);

describe('the import graph of src/', () => {
  it('names every folder in the order', () => {
    const folders = new Set(files.map(folderOf).filter((folder) => !folder.endsWith('.ts')));
    expect([...folders].sort()).toEqual(FOLDER_ORDER.flat().sort());
  });

  it('never imports a folder above its own, nor a separate sibling', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      for (const target of targets) {
        const to = folderOf(target);
        if (to === from || to.endsWith('.ts')) continue;
        const wrongWay = floorOf(to) < floorOf(from);
        const separate = SEPARATE.some(([a, b]) => a === from && b === to);
        if (wrongWay || separate) upward.push(`${name(file)} -> ${name(target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("never imports another command's folder: what two commands share is in commands/common/", () => {
    const commandOf = (file: string): string | undefined => {
      const [top, command] = path.relative(SRC, file).split(path.sep);
      return top === 'commands' && command !== undefined && !command.endsWith('.ts') ? command : undefined;
    };
    const sideways: string[] = [];
    for (const [file, targets] of graph) {
      const from = commandOf(file);
      if (from === undefined) continue;
      for (const target of targets) {
        const to = commandOf(target);
        if (to !== undefined && to !== from && to !== 'common') sideways.push(`${name(file)} -> ${name(target)}`);
      }
    }
    expect(sideways).toEqual([]);
  });

  it('has no import cycle between files', () => {
    // Tarjan's strongly connected components: a component of two or more files is a cycle.
    let counter = 0;
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    const visit = (file: string): void => {
      index.set(file, counter);
      low.set(file, counter);
      counter += 1;
      stack.push(file);
      onStack.add(file);
      for (const target of graph.get(file) ?? []) {
        if (!graph.has(target)) continue;
        if (!index.has(target)) {
          visit(target);
          low.set(file, Math.min(low.get(file)!, low.get(target)!));
        } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
      if (low.get(file) !== index.get(file)) return;
      const component: string[] = [];
      for (;;) {
        const member = stack.pop()!;
        onStack.delete(member);
        component.push(name(member));
        if (member === file) break;
      }
      if (component.length > 1) cycles.push(component.sort());
    };
    for (const file of graph.keys()) if (!index.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});

describe('the ledger', () => {
  it('keeps its SQL in ledger/: no other folder opens a database or runs a statement, but the scratch join of a scattered export and the shaping stage', () => {
    // Report and engine read the ledger through its methods (plain data in and out), so another store can implement
    // them (docs/architecture.md). The intake's scratch join is a database of its own, not the ledger, and so is the
    // shaping stage's DuckDB (shape/).
    const opening = files
      .filter((file) => /from\s+['"]better-sqlite3['"]|\.(?:prepare|pragma)\(/.test(readFileSync(file, 'utf8')))
      .map(name)
      .filter(
        (file) =>
          !file.startsWith(`ledger${path.sep}`) &&
          !file.startsWith(`shape${path.sep}`) &&
          file !== path.join('intake', 'scratch-join.ts'),
      );
    expect(opening).toEqual([]);
  });
});

describe('exported names', () => {
  it('are unique in src/: one name, one meaning (a type, constant or function exported from two files is two words)', () => {
    const declared =
      /^export (?:declare )?(?:abstract )?(?:async )?(?:const|let|function\*?|class|interface|type|enum)\s+([\w$]+)/gm;
    const filesOf = new Map<string, Set<string>>();
    for (const file of files)
      for (const match of readFileSync(file, 'utf8').matchAll(declared)) {
        const exported = match[1] ?? '';
        filesOf.set(exported, (filesOf.get(exported) ?? new Set()).add(name(file)));
      }
    const duplicates = [...filesOf]
      .filter(([, where]) => where.size > 1)
      .map(([exported, where]) => `${exported}: ${[...where].sort().join(', ')}`);
    expect(duplicates).toEqual([]);
  });
});

describe('the documentation', () => {
  const root = path.join(import.meta.dirname, '..');
  it('lists every page of docs/ in docs/README.md', () => {
    const index = readFileSync(path.join(root, 'docs', 'README.md'), 'utf8');
    const pages = readdirSync(path.join(root, 'docs')).filter((page) => page.endsWith('.md') && page !== 'README.md');
    expect(pages.filter((page) => !index.includes(`](${page})`))).toEqual([]);
  });

  it('keeps the README a front page: at most 8 KB', () => {
    expect(readFileSync(path.join(root, 'README.md')).length).toBeLessThanOrEqual(8 * 1024);
  });
});
