import { expect } from 'vitest';
import type { InspectedAccount } from '../../src/sandbox/inspected.js';
import { differences, type ExpectedExport } from './oracle.js';

/**
 * Every valid account of the export created exactly once on the service, its payload exactly as mapped from the whole
 * export (customers, supply addresses and every other field) and each of its records once; no invalid account created.
 */
export function expectServiceHoldsExport(service: InspectedAccount[], expected: ExpectedExport): void {
  const wrong = differences(service, expected);
  expect(wrong.slice(0, 10), `${wrong.length} accounts differ from the export`).toEqual([]);
}
