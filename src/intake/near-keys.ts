import type { Origin } from '../mapping/types.js';

// Post-import records whose account is not in the export, but whose number matches an account of the export once
// spaces, leading zeros and case are set aside (`12345` and `0012345`: a spreadsheet stripped the zeros). Allowed as
// records for an earlier import, they would stay behind at push as accounts that do not exist; validate warns,
// naming both. Entries come in byte order of their numbers, so an account is kept for the orphans after it only when
// its loose form differs from it ("0012345" comes before "12345"; "12345" before "0012345" is the orphan kept first).
// Memory is bounded (about 35 MB): at most MAX_KEPT numbers of each side are kept for matching, so in a larger export
// a pair past them is not found (the warning is a help, never a guarantee).

export interface NearKey {
  /** The number the records give, and where the first of them is. */
  orphan: { number: string; origin: Origin };
  /** The account of the export it matches, and its record. */
  account: { number: string; origin: Origin };
}

const MAX_KEPT = 200_000;
const MAX_REPORTED = 1_000;

const SPACE = /\s/u;

/** `  0012345 ` -> `12345`, `ACC-1` -> `acc-1`: what a spreadsheet or a typist may have changed. */
export function looseKey(number: string): string {
  // Each replace only where it can change something (profiled: this runs for every account and orphan).
  const trimmed = (SPACE.test(number) ? number.replace(/\s+/gu, '') : number).toLowerCase();
  return trimmed.startsWith('0') ? trimmed.replace(/^0+(?=.)/u, '') : trimmed;
}

export class NearKeys {
  readonly found: NearKey[] = [];
  #accounts = new Map<string, { number: string; origin: Origin }>();
  #orphans = new Map<string, { number: string; origin: Origin }>();

  account(number: string, origin: Origin): void {
    const key = looseKey(number);
    const orphan = this.#orphans.get(key);
    if (orphan !== undefined) this.#add({ orphan, account: { number, origin } });
    if (key !== number && this.#accounts.size < MAX_KEPT) this.#accounts.set(key, { number, origin });
  }

  orphan(number: string, origin: Origin | undefined): void {
    if (origin === undefined) return;
    const key = looseKey(number);
    const account = this.#accounts.get(key);
    if (account !== undefined) this.#add({ orphan: { number, origin }, account });
    else if (this.#orphans.size < MAX_KEPT && !this.#orphans.has(key)) this.#orphans.set(key, { number, origin });
  }

  #add(near: NearKey): void {
    if (this.found.length < MAX_REPORTED) this.found.push(near);
  }
}
