import { createRequire } from 'node:module';
import { getCountries, getCountryCallingCode, isValidPhoneNumber } from 'libphonenumber-js';
import { describe, expect, it } from 'vitest';
import { isValidInternationalPhone } from '../../src/schema/phone.js';
import { seededStream as random } from '../../src/sandbox/random.js';

const require = createRequire(import.meta.url);
const mobileExamples = require('libphonenumber-js/examples.mobile.json') as Record<string, string>;
const metadata = require('libphonenumber-js/metadata.min.json') as { country_calling_codes: Record<string, string[]> };

const next = random(20261122);
const digit = (): string => String(Math.floor(next() * 10));
const digits = (length: number): string => Array.from({ length }, digit).join('');

function expected(value: string): boolean {
  return value.startsWith('+') && isValidPhoneNumber(value);
}

/** Numbers built from a national number: lengths +-2, changed edge digits, national prefix, random. */
function variants(code: string, national: string): string[] {
  const out = [`+${code}${national}`, `+${code}0${national}`, `+${code}00${national}`, `+${code}1${national}`];
  for (let cut = 1; cut <= 2; cut++) out.push(`+${code}${national.slice(0, -cut)}`, `+${code}${national.slice(cut)}`);
  for (let add = 1; add <= 3; add++) out.push(`+${code}${national}${digits(add)}`, `+${code}${digits(add)}${national}`);
  for (let d = 0; d <= 9; d++) {
    out.push(`+${code}${national.slice(0, -1)}${d}`, `+${code}${d}${national.slice(1)}`);
    if (national.length > 2) out.push(`+${code}${national.slice(0, 2)}${d}${national.slice(3)}`);
  }
  for (let length = 1; length <= 18; length++) {
    for (let i = 0; i < 12; i++)
      out.push(`+${code}${digits(length)}`, `+${code}${national.slice(0, 2)}${digits(length)}`);
  }
  return out;
}

function caseSet(): string[] {
  const cases: string[] = [];
  for (const [code, countries] of Object.entries(metadata.country_calling_codes)) {
    for (const country of countries) {
      const example = mobileExamples[country];
      if (example) cases.push(...variants(code, example));
    }
    cases.push(...variants(code, digits(9)));
  }
  for (const country of getCountries()) {
    const code = getCountryCallingCode(country);
    const example = mobileExamples[country];
    if (example)
      cases.push(
        `+${code} ${example}`,
        `+${code} (0) ${example}`,
        `+${code}-${example}`,
        `+${code}${example} ext. 12`,
        `${code}${example}`,
      );
  }
  for (let i = 0; i < 20000; i++) cases.push(`+${digits(1 + Math.floor(next() * 22))}`);
  const alphabet = '+0123456789 -().x#*a\u0660\uff11';
  for (let i = 0; i < 5000; i++) {
    cases.push(
      Array.from({ length: Math.floor(next() * 20) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
    );
  }
  cases.push(
    '',
    '+',
    '+0',
    '+0447911123456',
    '++447911123456',
    '+44 (0) 20 7946 0958',
    '+44 7911 123456',
    '+4479111234560000000000000',
    '+\u0664\u0664\u0667\u0669\u0661\u0661\u0661\u0662\u0663\u0664\u0665\u0666',
    '+447911123456;ext=12',
    '+447911123456 x12',
    '+447911123456\n',
    ' +447911123456',
    '+1 800 FLOWERS',
    '+18002530000',
    '+80012345678',
    '+979123456789',
    '+882123456789',
    '+7 800 555 35 35',
    '+78005553535',
    '+447624369230',
    '+441481123456',
  );
  return cases;
}

describe('isValidInternationalPhone', () => {
  it("gives exactly libphonenumber-js's answer on every calling code's examples, mutations and random strings", () => {
    const cases = caseSet();
    const mismatches = cases.filter((value) => isValidInternationalPhone(value) !== expected(value));
    const valid = cases.filter(expected).length;
    console.log(`phone: compared ${cases.length} strings (${valid} valid), ${mismatches.length} mismatches`);
    expect(mismatches.slice(0, 20)).toEqual([]);
    expect(cases.length).toBeGreaterThan(200_000);
    // A set with only invalid (or only valid) strings would prove little.
    expect(valid).toBeGreaterThan(10_000);
    expect(cases.length - valid).toBeGreaterThan(10_000);
  });

  it('answers the plain cases', () => {
    expect(isValidInternationalPhone('+447911123456')).toBe(true);
    expect(isValidInternationalPhone('447911123456')).toBe(false);
    expect(isValidInternationalPhone('+44791112345')).toBe(false);
  });
});
