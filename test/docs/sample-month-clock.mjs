// Loaded into every command the tour test runs (NODE_OPTIONS=--import): the process's wall clock (Date.now, new
// Date()) starts at SAMPLE_MONTH_NOW and goes on at the pace of time. The sample export's records are dated in
// November 2026 and the sandbox's open statement period starts on the first day of the current month, so the tour's
// push prints what it shows on a day of that month only; at this instant it does, whatever the machine's date. The
// machine's own clock is never touched.
//
// The processes a process starts keep its clock (SAMPLE_MONTH_ANCHOR, inherited with NODE_OPTIONS): a child does not
// start again at SAMPLE_MONTH_NOW unless it is given another instant. So a whole test run can be moved to another
// month, the vitest workers, the sandboxes they start and every binary they run on one clock (docs/development.md,
// "Building and testing").

const now = process.env.SAMPLE_MONTH_NOW ?? '2026-11-23T12:00:00Z';
const RealDate = globalThis.Date;
const [anchoredNow, anchoredAt] = (process.env.SAMPLE_MONTH_ANCHOR ?? '').split(' ');
const startedAt = anchoredNow === now && Number.isFinite(Number(anchoredAt)) ? Number(anchoredAt) : RealDate.now();
process.env.SAMPLE_MONTH_ANCHOR = `${now} ${startedAt}`;
const offset = Date.parse(now) - startedAt;

class SampleMonthDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...args);
  }

  static now() {
    return RealDate.now() + offset;
  }
}
globalThis.Date = SampleMonthDate;
