import { ExportCode } from './issue-codes.js';
import type { Origin, SourceIssue } from './types.js';

// The same customer twice on one account (docs/export-format.md "Warnings"): two customers of the account with the
// same given name, family name and date of birth, compared without regard to case, accents written two ways or runs of
// spaces. Most often a join that repeats a holder (one row per supply point, per role), sometimes one person keyed
// twice. A warning at both lines: the account is sent as it is. Pure.

const IDENTITY = ['given_name', 'family_name', 'date_of_birth'] as const;

function identityOf(customer: unknown): string | undefined {
  if (typeof customer !== 'object' || customer === null) return undefined;
  const parts = IDENTITY.map((field) => {
    const value = (customer as Record<string, unknown>)[field];
    return typeof value === 'string' ? value.normalize('NFKC').trim().replace(/\s+/gu, ' ').toLowerCase() : '';
  });
  // Without a family name or a date of birth two people cannot be told to be one.
  if (parts[1] === '' || parts[2] === '') return undefined;
  return parts.join('\u0000');
}

const at = (origin: Origin | undefined): string => (origin ? `${origin.file}:${origin.line}` : 'the account');

/** Warnings for the customers of one account that are the same person, one at each of their lines. */
export function duplicateCustomerWarnings(
  number: string,
  customers: readonly unknown[],
  originOf: (index: number) => Origin | undefined,
): SourceIssue[] {
  if (customers.length < 2) return [];
  const byIdentity = new Map<string, number[]>();
  customers.forEach((customer, index) => {
    const identity = identityOf(customer);
    if (identity !== undefined) byIdentity.set(identity, [...(byIdentity.get(identity) ?? []), index]);
  });
  const warnings: SourceIssue[] = [];
  for (const indexes of byIdentity.values()) {
    if (indexes.length < 2) continue;
    for (const index of indexes) {
      const others = indexes.filter((other) => other !== index);
      const origin = originOf(index);
      warnings.push({
        file: origin?.file ?? '',
        line: origin?.line ?? 0,
        attr: `customers.${index}`,
        externalAccountNumber: number,
        code: ExportCode.duplicateCustomer,
        message:
          `customers.${index} is the same customer as ` +
          `${others.map((other) => `customers.${other} (${at(originOf(other))})`).join(', ')}: the same given_name, ` +
          'family_name and date_of_birth. A join that repeats a holder, or one person keyed twice? Send each ' +
          'customer once.',
      });
    }
  }
  return warnings;
}
