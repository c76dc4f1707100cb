import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FILES, LEGACY_CIS } from './legacy-cis-files.js';

// fixtures/legacy-cis/ is generated: its legacy files are exactly what make-fixture.mjs writes, so a change made by
// hand to a legacy file (which the hand-written expectations would not know of) cannot pass unnoticed.

const out = mkdtempSync(join(tmpdir(), 'legacy-cis-fixture-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('fixtures/legacy-cis', () => {
  it('holds exactly the files its generator writes, byte for byte', () => {
    const said = execFileSync(process.execPath, [join(LEGACY_CIS, 'make-fixture.mjs'), out]).toString();
    expect(said).toContain('227 accounts (200 live)');
    for (const file of Object.values(FILES))
      expect(readFileSync(join(out, file)).equals(readFileSync(join(LEGACY_CIS, file))), file).toBe(true);
  });

  it('is written as the CIS writes it: windows-1252 and CRLF, every cell quoted; the notes with a BOM', () => {
    const accounts = readFileSync(join(LEGACY_CIS, FILES.accounts));
    expect(accounts.includes(Buffer.from('O\x92Brien', 'latin1'))).toBe(true); // windows-1252, not UTF-8
    expect(accounts.toString('latin1').split('\r\n')[1]).toMatch(/^"SP","26\/11\/2026","\d{8}",/);
    expect(readFileSync(join(LEGACY_CIS, FILES.notes)).subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
  });
});
