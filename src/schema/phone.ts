import { isValidPhoneNumber, Metadata } from 'libphonenumber-js';

/**
 * The phone rule (docs/service.md "Validation rules the platform applies"): `+`, then a number that libphonenumber-js
 * (min metadata, default export) calls valid. The library compiles a RegExp from its metadata on
 * every check (~30 us per number); this module compiles each country's patterns once
 * and mirrors the library's path for the shape real exports have: '+' then digits only.
 * Anything else, and every case the mirror is not sure of, is answered by the library itself.
 */

/** Types after FIXED_LINE, in the order the library's getNumberType tries them. */
const OTHER_TYPES = [
  'MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
] as const;

/** The Metadata methods the library itself uses; its .d.ts declares only a few of them. */
interface TypeDefinition {
  pattern(): string;
  possibleLengths(): number[] | undefined;
}
interface RuntimeMetadata {
  selectNumberingPlan(country: string): void;
  numberingPlan: { nationalNumberPattern(): string; nationalPrefixForParsing(): string | undefined } | undefined;
  type(type: string): TypeDefinition | undefined;
  leadingDigits(): string | undefined;
  hasTypes(): boolean;
  hasCallingCode(code: string): boolean;
  isNonGeographicCallingCode(code: string): boolean;
  getCountryCodesForCallingCode(code: string): string[] | undefined;
}

function newMetadata(): RuntimeMetadata {
  return new Metadata() as unknown as RuntimeMetadata;
}

interface TypeRule {
  readonly re: RegExp;
  readonly lengths: readonly number[] | undefined;
}

interface Plan {
  readonly national: RegExp;
  readonly hasTypes: boolean;
  readonly fixedLine: TypeRule | undefined;
  readonly others: readonly TypeRule[];
  readonly leadingDigits: RegExp | undefined;
  /** `^(?:nationalPrefixForParsing)`: a match sends the number to the library (prefix stripping). */
  readonly prefix: RegExp | undefined;
}

const FAST_SHAPE = /^\+[1-9]\d{2,20}$/;
const metadata = newMetadata();
const plans = new Map<string, Plan>();
const callingCodes = new Map<string, readonly string[] | null>();

function entirely(pattern: string): RegExp {
  return new RegExp('^(?:' + pattern + ')$');
}

function typeRule(meta: RuntimeMetadata, type: (typeof OTHER_TYPES)[number] | 'FIXED_LINE'): TypeRule | undefined {
  const definition = meta.type(type);
  // The library skips a type without a definition or with an empty pattern (isNumberTypeEqualTo).
  if (!definition || !definition.pattern()) return undefined;
  return { re: entirely(definition.pattern()), lengths: definition.possibleLengths() };
}

function compilePlan(country: string): Plan {
  const meta = newMetadata();
  meta.selectNumberingPlan(country);
  const numberingPlan = meta.numberingPlan;
  if (!numberingPlan) throw new Error(`libphonenumber-js has no numbering plan for ${country}`);
  const leading = meta.leadingDigits();
  const prefix = numberingPlan.nationalPrefixForParsing();
  const fixedLine = typeRule(meta, 'FIXED_LINE');
  // getNumberType returns FIXED_LINE_OR_MOBILE or FIXED_LINE when the fixed-line pattern matches:
  // defined either way, so only "some type matches" matters for validity.
  return {
    national: entirely(numberingPlan.nationalNumberPattern()),
    hasTypes: meta.hasTypes(),
    fixedLine,
    others: OTHER_TYPES.map((type) => typeRule(meta, type)).filter((rule): rule is TypeRule => rule !== undefined),
    leadingDigits: leading ? new RegExp(leading) : undefined,
    prefix: prefix ? new RegExp('^(?:' + prefix + ')') : undefined,
  };
}

function planOf(country: string): Plan {
  let plan = plans.get(country);
  if (!plan) {
    plan = compilePlan(country);
    plans.set(country, plan);
  }
  return plan;
}

/** Countries sharing a geographic calling code, main one first; null for unknown or non-geographic codes. */
function countriesOf(code: string): readonly string[] | null {
  let countries: readonly string[] | null | undefined = callingCodes.get(code);
  if (countries === undefined) {
    const known = metadata.hasCallingCode(code) && !metadata.isNonGeographicCallingCode(code);
    countries = known ? (metadata.getCountryCodesForCallingCode(code) ?? null) : null;
    if (countries && countries.length === 0) countries = null;
    callingCodes.set(code, countries);
  }
  return countries;
}

function matchesType(national: string, rule: TypeRule | undefined): boolean {
  if (!rule) return false;
  if (rule.lengths && !rule.lengths.includes(national.length)) return false;
  return rule.re.test(national);
}

/** Mirrors getNumberType(...) !== undefined. */
function hasNumberType(national: string, plan: Plan): boolean {
  if (!plan.national.test(national)) return false;
  return matchesType(national, plan.fixedLine) || plan.others.some((rule) => matchesType(national, rule));
}

/** Mirrors getCountryByCallingCode / getCountryByNationalNumber for a shared calling code. */
function countryFor(national: string, countries: readonly string[]): string | undefined {
  if (countries.length === 1) return countries[0];
  for (const country of countries) {
    const plan = planOf(country);
    if (plan.leadingDigits) {
      if (national.search(plan.leadingDigits) === 0) return country;
    } else if (hasNumberType(national, plan)) return country;
  }
  return undefined;
}

/** The fast answer, or undefined when the library must decide. `digits` has no '+'. */
function fastAnswer(digits: string): boolean | undefined {
  // extractCountryCallingCode: the first 1-3 digit prefix that is a known calling code.
  for (let size = 1; size <= 3; size++) {
    const code = digits.slice(0, size);
    if (!metadata.hasCallingCode(code)) continue;
    const countries = countriesOf(code);
    if (!countries) return undefined;
    const national = digits.slice(size);
    if (national.length < 2 || national.length > 17) return undefined;
    const main = countries[0] as string;
    // National-prefix stripping applies to international numbers too; leave it to the library.
    if (planOf(main).prefix?.test(national)) return undefined;
    const plan = planOf(countryFor(national, countries) ?? main);
    return plan.hasTypes ? hasNumberType(national, plan) : plan.national.test(national);
  }
  return undefined;
}

/** Exactly `value.startsWith('+') && isValidPhoneNumber(value)` (libphonenumber-js, min metadata). */
export function isValidInternationalPhone(value: string): boolean {
  if (!value.startsWith('+')) return false;
  if (FAST_SHAPE.test(value)) {
    const answer = fastAnswer(value.slice(1));
    if (answer !== undefined) return answer;
  }
  return isValidPhoneNumber(value);
}
