import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterOriginLine } from '../run-origin-line.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'migrate.js');

/** dist/ is built once for the whole test run by test/global-setup.ts; this checks it is there. */
export function build(): void {
  if (!existsSync(path.join(root, 'dist', 'cli', 'main.js')))
    throw new Error('dist/cli/main.js is missing: run the tests through vitest (test/global-setup.ts builds it)');
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function migrate(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): RunResult {
  const env = { ...process.env, ...options.env };
  if (!options.env || !('MIGRATE_SUPPLIER' in options.env)) delete env['MIGRATE_SUPPLIER'];
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? root,
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    timeout: 60_000,
  });
  // What the command says after its first line (the run configuration and the service: run-origin-line.ts).
  return { code: result.status, stdout: result.stdout, stderr: afterOriginLine(result.stderr) };
}

let base: string | undefined;

/** Removes every directory exportDir made (call in afterAll). */
export function cleanup(): void {
  if (base !== undefined) rmSync(base, { recursive: true, force: true });
  base = undefined;
}

/** A temporary export directory holding `files` (name -> content). */
export function exportDir(files: Record<string, string | Buffer>): string {
  base ??= mkdtempSync(path.join(os.tmpdir(), 'migrate-validate-test-'));
  const dir = mkdtempSync(path.join(base, 'export-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}

/**
 * The export with a customer and a supply address for every account of its accounts.csv (whose first column is
 * external_account_number): the parts no account can be created without, for tests about something else.
 */
export function withParts(files: Record<string, string>): Record<string, string> {
  const keys = (files['accounts.csv'] ?? '')
    .split('\n')
    .slice(1)
    .filter((line) => line !== '')
    .map((line) => line.split(',')[0] ?? '');
  return {
    'customers.csv': `external_account_number,given_name,family_name\n${keys.map((key) => `${key},Ada,Lovelace\n`).join('')}`,
    'supply_addresses.csv':
      'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date\n' +
      keys.map((key) => `${key},1 High St,LS1 1AA,2024-01-01\n`).join(''),
    ...files,
  };
}
